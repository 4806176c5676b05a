"""What a profile on an object store or with a PostgreSQL metastore starts with, without a JVM:
the jars, the S3A settings, the secrets kept off the command line, the endpoint asked first,
and the consumer lease's judgement of a lease left behind."""

import os
import socket
import time
from pathlib import Path

import pytest
from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.redaction import scrubbed
from dbt.adapters.spark_streams.session import embedded_confs
from dbt.adapters.spark_streams.session.embedded_confs import session_confs
from dbt.adapters.spark_streams.session.secret_confs import split_secrets
from dbt.adapters.spark_streams.session.stores import lease, object_store

S3 = {
    "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
    "spark.hadoop.fs.s3a.access.key": "AKIAEXAMPLE",
    "spark.hadoop.fs.s3a.secret.key": "s3-secret-value",
}


def credentials(**profile: object) -> SparkStreamsCredentials:
    return SparkStreamsCredentials.from_dict({"schema": "analytics", **profile})


def test_an_s3a_warehouse_brings_hadoop_aws_of_pysparks_hadoop(project: Path) -> None:
    home = embedded_confs.spark_home()
    version = object_store.hadoop_version(home)
    assert (home / "jars" / f"hadoop-client-api-{version}.jar").is_file()
    creds = credentials(warehouse_dir="s3a://lake/warehouse/", server_side_parameters=S3)
    confs = session_confs(creds)
    assert confs["spark.sql.warehouse.dir"] == "s3a://lake/warehouse"
    assert confs["spark.jars.packages"] == (
        f"{creds.delta_package},org.apache.hadoop:hadoop-aws:{version}"
    )
    assert confs["spark.hadoop.fs.s3a.create.conditional.enabled"] == "true"
    assert confs["spark.hadoop.fs.s3a.path.style.access"] == "true"
    # a local profile resolves Delta alone, and empty S3A settings (a template's) change nothing
    blank = {key: "" for key in S3}
    local = session_confs(credentials(server_side_parameters=blank))
    assert local["spark.jars.packages"] == creds.delta_package
    assert "spark.hadoop.fs.s3a.path.style.access" not in local


def test_a_profile_that_turns_conditional_puts_off_is_refused(project: Path) -> None:
    off = {**S3, "spark.hadoop.fs.s3a.create.conditional.enabled": "false"}
    with pytest.raises(FailedToConnectError, match="one build of a stream consumer at a time"):
        session_confs(credentials(warehouse_dir="s3a://lake/w", server_side_parameters=off))
    mine = {**S3, "spark.hadoop.fs.s3a.path.style.access": "false"}
    confs = session_confs(credentials(warehouse_dir="s3a://lake/w", server_side_parameters=mine))
    assert confs["spark.hadoop.fs.s3a.path.style.access"] == "false"


def test_object_store_secrets_stay_off_the_command_line_and_out_of_errors() -> None:
    token = {"spark.hadoop.fs.s3a.bucket.lake.session.token": "tok-value"}
    creds = credentials(server_side_parameters={**S3, **token})
    public, secret = split_secrets({**S3, **token, "spark.app.name": "x"})
    assert set(secret) == {
        "spark.hadoop.fs.s3a.secret.key",
        "spark.hadoop.fs.s3a.bucket.lake.session.token",
    }
    assert "spark.hadoop.fs.s3a.access.key" in public
    assert {"s3-secret-value", "tok-value"} <= set(creds.secrets())
    # a switch whose name says token holds no secret: errors keep their true and false
    switch = {"spark.hadoop.fs.azure.enable.delegation.token": "true"}
    secrets = credentials(server_side_parameters={**S3, **switch}).secrets()
    assert scrubbed("enabled: true; key s3-secret-value", secrets) == "enabled: true; key *****"


def test_a_postgres_metastore_gets_its_driver_and_no_schema_check(project: Path) -> None:
    confs = session_confs(
        credentials(
            metastore_url="jdbc:postgresql://db:5432/metastore",
            metastore_user="hive",
            metastore_password="pw-value",
        )
    )
    assert confs["spark.hadoop.javax.jdo.option.ConnectionDriverName"] == "org.postgresql.Driver"
    assert confs["spark.hadoop.hive.metastore.schema.verification"] == "false"
    assert confs["spark.hadoop.datanucleus.connectionPool.maxPoolSize"] == "3"
    derby = session_confs(credentials(metastore_url="jdbc:derby://db:1527/ms;create=true"))
    assert "spark.hadoop.hive.metastore.schema.verification" not in derby


def test_an_endpoint_nobody_answers_at_fails_before_the_jvm_starts() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends
    endpoint = {**S3, "spark.hadoop.fs.s3a.endpoint": f"http://127.0.0.1:{port}"}
    creds = credentials(
        warehouse_dir="s3a://lake/w", server_side_parameters=endpoint, connect_retries=1
    )
    began = time.monotonic()
    with pytest.raises(FailedToConnectError) as refused:
        object_store.require_endpoint(creds)
    assert time.monotonic() - began < creds.connect_timeout * 2
    said = str(refused.value)
    assert f"The object store at 127.0.0.1:{port} (spark.hadoop.fs.s3a.endpoint)" in said
    assert "2 attempts of 10 s" in said and "s3-secret-value" not in said
    assert object_store.endpoint_address(credentials(server_side_parameters={**S3, **{
        "spark.hadoop.fs.s3a.endpoint": "s3.eu-central-1.amazonaws.com"}})) == (
        "s3.eu-central-1.amazonaws.com", 443)  # fmt: skip


def test_a_lease_is_taken_over_only_when_its_holder_is_gone_or_old() -> None:
    here, now = socket.gethostname(), time.time()
    assert not lease._abandoned({})
    assert not lease._abandoned({"host": here, "pid": os.getppid(), "since": now})
    assert lease._abandoned({"host": here, "pid": 2**22 + 17, "since": now})
    assert not lease._abandoned({"host": "elsewhere", "pid": 1, "since": now})
    assert lease._abandoned({"host": "elsewhere", "pid": 1, "since": now - 7 * 3600})
    # this process's own lease: held by a build under way, or left by one that failed
    lease._HELD.add("mine")
    assert not lease._abandoned({"host": here, "pid": os.getpid(), "since": now, "owner": "mine"})
    lease._HELD.discard("mine")
    assert lease._abandoned({"host": here, "pid": os.getpid(), "since": now, "owner": "mine"})
    said = lease._sentence("orders_mirror", {"host": "h", "pid": 7, "since": now})
    assert said.startswith("orders_mirror is being built by another process (process 7 on h")
    assert lease.lease_path("s3a://lake/w/", "a.b") == "s3a://lake/w/_stream_leases/a.b.json"


@pytest.mark.parametrize(
    "key",
    [
        "spark.hadoop.fs.azure.account.oauth2.client.secret",
        "spark.hadoop.fs.azure.account.oauth2.client.secret.lake.dfs.core.windows.net",
        "spark.hadoop.fs.azure.sas.fixed.token",
        "spark.ssl.keyStorePassword",
        "spark.hadoop.fs.s3a.encryption.key",
        "spark.hadoop.fs.s3a.bucket.lake.server-side-encryption.key",
        "spark.hadoop.fs.azure.account.key.lake.dfs.core.windows.net",
    ],
)
def test_the_keys_spark_redacts_are_secrets_but_s3as_access_key(key: str) -> None:
    public, secret = split_secrets({key: "v", "spark.hadoop.fs.s3a.access.key": "AKIA"})
    assert list(secret) == [key] and list(public) == ["spark.hadoop.fs.s3a.access.key"]
