"""Streams with every table on an object store (S3Proxy over HTTP, reached through S3A) and the
catalog in PostgreSQL, as `make test-store` runs them (scripts/with_stores.py): where the tables
and the catalog entries land, an insert-only stream on a folder of objects, the conditional
PUT a commit relies on to be exclusive across processes, and a sentence for each refusal of
the store or of the metastore's database.
"""

import json
import os
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from dbt.adapters.exceptions import FailedToConnectError
from dbt.tests.util import run_dbt
from py4j.protocol import Py4JJavaError

from dbt.adapters.spark_streams.session.errors import NO_CONNECTIONS_SENTENCE, spark_error_message
from dbt.adapters.spark_streams.session.stores import lease, probe
from dbt.adapters.spark_streams.streams.errors import StreamConsumedElsewhere
from scripts import postgres_metastore
from tests.conftest import STORES_ENV, session_credentials
from tests.functional.delta import DeltaProject, sources_yml

pytestmark = pytest.mark.skipif(
    not os.environ.get(STORES_ENV), reason="needs `make test-store` (scripts/with_stores.py)"
)

MODELS = {
    "sources.yml": sources_yml("shop", "orders", "events"),
    "orders_mirror.sql": (
        "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
        "unique_key='id') }}\nselect * from {{ stream(source('shop', 'orders'), "
        "unique_key='id') }}\n"
    ),
    "events_log.sql": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        "select * from {{ stream(source('shop', 'events'), mode='insert_only') }}\n"
    ),
}


def stores() -> Path:
    return Path(os.environ[STORES_ENV])


def bucket_folder() -> Path:
    """The folder S3Proxy keeps the test bucket's objects in."""
    state = json.loads((stores() / "s3" / "object-store.json").read_text())
    return stores() / "s3" / "blobs" / state["bucket"]


def catalog_tables(spark, creds) -> set[str]:
    """The table names the PostgreSQL metastore holds (its TBLS table), read over JDBC."""
    jvm = spark._jvm
    properties = jvm.java.util.Properties()
    properties.setProperty("user", creds.metastore_user)
    properties.setProperty("password", creds.metastore_password)
    connection = jvm.java.sql.DriverManager.getConnection(creds.metastore_url, properties)
    try:
        rows = connection.createStatement().executeQuery('select "TBL_NAME" from "TBLS"')
        names = set()
        while rows.next():
            names.add(rows.getString(1))
        return names
    finally:
        connection.close()


class TestObjectStore(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return MODELS

    def test_streams_on_the_object_store(self, project, spark, spark_home):
        schema, sql = project.test_schema, project.run_sql
        warehouse = str(session_credentials(spark_home).warehouse_dir)
        landing = f"{warehouse.rsplit('/', 1)[0]}/landing/{schema}"
        sql(f"create table {schema}.orders (id int, status string) using delta")
        sql(f"insert into {schema}.orders values (1, 'new'), (2, 'new')")
        events = "(id int, kind string) using parquet"
        sql(f"create table {schema}.events {events} location '{landing}'")
        sql(f"insert into {schema}.events values (1, 'a'), (2, 'b')")
        run_dbt(["run"])
        sql(f"update {schema}.orders set status = 'paid' where id = 1")
        sql(f"delete from {schema}.orders where id = 2")
        sql(f"insert into {schema}.orders values (3, 'new')")
        sql(f"insert into {schema}.events values (3, 'c')")
        run_dbt(["run"])
        run_dbt(["run"])  # nothing pending: nothing again
        mirror = sql(f"select id, status from {schema}.orders_mirror order by id", fetch="all")
        assert [tuple(row) for row in mirror] == [(1, "paid"), (3, "new")]
        events = sql(f"select id from {schema}.events_log order by id", fetch="all")
        assert [row[0] for row in events] == [1, 2, 3]
        # the tables, the registry and the landing folder are objects in the bucket
        for table in ("orders", "orders_mirror", "events_log"):
            location = spark.sql(f"describe detail {schema}.{table}").first()["location"]
            assert location.startswith("s3a://"), (table, location)
        objects = [p for p in bucket_folder().rglob("*") if p.is_file()]
        assert any(f"{schema}.db/orders_mirror/_delta_log" in str(p) for p in objects)
        assert sum(f"landing/{schema}" in str(p) for p in objects) >= 2
        assert {"orders", "orders_mirror", "events_log"} <= catalog_tables(
            spark, session_credentials(spark_home)
        )


def test_the_store_takes_a_conditional_put_once(spark, spark_home):
    """What Delta's S3 log store does with commit N (`create(N.json, overwrite=false)`) lets
    two writers that both found N free each PUT it, the later one winning: the hazard of two
    drivers. S3A's conditional create (its builder's option, which the leases use) lets the
    store take one PUT and refuse the other with 412."""
    creds = session_credentials(spark_home)
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()

    def path():
        return jvm.org.apache.hadoop.fs.Path(f"{creds.warehouse_dir}/race/{time.time_ns()}")

    def written(filesystem, at) -> bytes:
        return bytes(filesystem.open(at).readAllBytes())

    plain = path()
    filesystem = plain.getFileSystem(conf)
    first, second = filesystem.create(plain, False), filesystem.create(plain, False)
    first.write(b"first")
    second.write(b"second")
    first.close()
    second.close()  # taken: the first writer's object is gone
    assert written(filesystem, plain) == b"second"

    conditional = path()
    writers = [
        filesystem.createFile(conditional).overwrite(False).must(lease.CONDITIONAL, True).build()
        for _ in range(2)
    ]
    writers[0].write(b"first")
    writers[1].write(b"second")
    writers[0].close()
    with pytest.raises(Py4JJavaError) as refused:
        writers[1].close()
    assert "RemoteFileChangedException" in str(refused.value.java_exception.getClass())
    assert "412" in str(refused.value.java_exception.getMessage())
    assert written(filesystem, conditional) == b"first"


def test_a_listing_holds_every_object_while_others_land(spark, spark_home):
    """Delta finds a table's versions by listing its `_delta_log`: a LIST that leaves out an
    old commit while another process writes the next one fails the read (versions not
    contiguous), as S3Proxy 4.0's file-system backend did (a PUT's temporary file vanishing
    under its listing ended the listing). S3 lists every object written before the LIST."""
    creds = session_credentials(spark_home)
    jvm = spark._jvm
    folder = jvm.org.apache.hadoop.fs.Path(f"{creds.warehouse_dir}/listing/{time.time_ns()}")
    filesystem = folder.getFileSystem(spark._jsc.hadoopConfiguration())

    def put(name: str) -> None:
        out = filesystem.create(jvm.org.apache.hadoop.fs.Path(folder, name), True)
        out.write(b"{}")
        out.close()

    old = {f"{version:020d}.json" for version in range(8)}
    for name in sorted(old):
        put(name)
    landing = threading.Event()

    def land() -> None:
        """PUTs without pause, of eight more names in turn: the folder stays small, so each
        listing takes as long as the first rather than longer with every object landed."""
        version = 0
        while not landing.is_set():
            put(f"{len(old) + version % 8:020d}.json")
            version += 1

    writer = threading.Thread(target=land)
    writer.start()
    try:
        short = []
        for _ in range(150):
            names = {str(status.getPath().getName()) for status in filesystem.listStatus(folder)}
            short += [sorted(old - names)] if old - names else []
    finally:
        landing.set()
        writer.join()
    assert short == []


def test_one_build_of_a_consumer_at_a_time(spark, spark_home, monkeypatch):
    warehouse = str(session_credentials(spark_home).warehouse_dir)
    jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()
    consumer = f"leases.orders_{time.time_ns()}"
    held = lease.acquire(jvm, conf, warehouse, consumer, "orders_mirror")
    with pytest.raises(StreamConsumedElsewhere) as refused:
        lease.acquire(jvm, conf, warehouse, consumer, "orders_mirror")
    said = str(refused.value)
    assert "orders_mirror is being built by another process (process " in said
    assert "being consumed by another run" in said and "moved no offset" in said
    lease.release(jvm, conf, held)
    # a killed run's lease (its process gone) is taken over, with a PUT conditional on its ETag
    monkeypatch.setattr(lease.os, "getpid", lambda: 2**22 + 17)  # no such process
    killed = lease.acquire(jvm, conf, warehouse, consumer, "orders_mirror")
    lease._HELD.discard(killed.owner)
    monkeypatch.undo()
    taken = lease.acquire(jvm, conf, warehouse, consumer, "orders_mirror")
    assert taken.owner != killed.owner
    lease.release(jvm, conf, taken)


def test_shared_writes_wait_for_another_holder(spark):
    """A write to the tables builds share waits while another build holds their lease, and
    goes ahead once it is released."""
    jvm, conf, warehouse = lease._on_object_store()
    holder = lease.acquire(jvm, conf, warehouse, lease.SHARED_WRITES, "Stream other")
    entered: list[float] = []

    def write() -> None:
        with lease.shared_writes("Stream mine"):
            entered.append(time.monotonic())

    writer = threading.Thread(target=write)
    writer.start()
    time.sleep(3)
    assert not entered, "the write went ahead while another build held the lease"
    released = time.monotonic()
    lease.release(jvm, conf, holder)
    writer.join(timeout=30)
    assert entered and entered[0] >= released
    path = jvm.org.apache.hadoop.fs.Path(lease.lease_path(warehouse, lease.SHARED_WRITES))
    assert not path.getFileSystem(conf).exists(path), "the writer's lease was left behind"


def test_refusals_are_one_sentence(spark, spark_home):
    creds = session_credentials(spark_home)
    secret = creds.server_side_parameters["spark.hadoop.fs.s3a.secret.key"]
    bound = creds.connect_timeout * (1 + creds.connect_retries)

    def refused(variant) -> str:
        began = time.monotonic()
        with pytest.raises(FailedToConnectError) as error:
            probe.probe_stores(spark, variant)
        assert time.monotonic() - began <= bound + 5
        said = str(error.value)
        assert secret not in said and variant.metastore_password not in said
        assert "Traceback" not in said and "\tat " not in said
        return said

    wrong_keys = {**creds.server_side_parameters, "spark.hadoop.fs.s3a.secret.key": "wrong"}
    said = refused(replace(creds, server_side_parameters=wrong_keys, metastore_url=None))
    assert "refused the keys" in said and "spark.hadoop.fs.s3a.secret.key" in said
    no_bucket = replace(creds, warehouse_dir="s3a://no-such-bucket/warehouse", metastore_url=None)
    assert "has no bucket no-such-bucket" in refused(no_bucket)
    wrong_login = replace(creds, metastore_password="not-the-password")
    said = refused(wrong_login)
    assert "refused the login of metastore" in said and "metastore_password" in said


def as_superuser(statement: str) -> None:
    """One statement as PostgreSQL's superuser, over the server's socket."""
    home = stores() / "postgres"
    state = json.loads((home / "postgres.json").read_text())
    psql = [f"{state['bin']}/psql", "-h", str(home / "sockets"), "-p", str(state["port"]),
            "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-q", "-c", statement]  # fmt: skip
    subprocess.run(postgres_metastore.as_server_user(psql), check=True, capture_output=True)


def test_a_metastore_out_of_connections_is_one_sentence(spark, spark_home):
    """A role allowed one connection, that one held: the probe and a metastore call both say
    the database has no connection left and what to do, from PostgreSQL's real refusal."""
    creds = session_credentials(spark_home)
    role, password = "one_connection", "one-connection-password"
    as_superuser(f"drop role if exists {role}")
    as_superuser(f"create role {role} login password '{password}' connection limit 1")
    limited = replace(creds, metastore_user=role, metastore_password=password)
    jvm, url, _, properties = probe._login(spark, limited)
    held = jvm.java.sql.DriverManager.getConnection(url, properties)
    try:
        with pytest.raises(FailedToConnectError) as refused:
            probe.probe_stores(spark, replace(limited, warehouse_dir=None))
        said = str(refused.value)
        assert f"has no connection left for {role}" in said and "max_connections" in said
        assert password not in said
        with pytest.raises(Py4JJavaError) as second:  # as Hive's pool meets it mid-run
            jvm.java.sql.DriverManager.getConnection(url, properties)
        explained = spark_error_message(second.value)
        assert explained is not None and explained.startswith(NO_CONNECTIONS_SENTENCE)
        assert "too many connections for role" in explained
    finally:
        held.close()
        as_superuser(f"drop role if exists {role}")
