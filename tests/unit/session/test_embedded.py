"""The embedded session's configuration, without starting a JVM."""

from pathlib import Path

import pytest
from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.credentials import DEFAULT_JVM_OPTIONS, SparkStreamsCredentials
from dbt.adapters.spark_streams.session import embedded as embedded_session
from dbt.adapters.spark_streams.session import embedded_confs
from dbt.adapters.spark_streams.session.embedded_confs import (
    DELTA_CATALOG,
    DELTA_EXTENSION,
    session_confs,
)
from dbt.adapters.spark_streams.versions import (
    SparkVersion,
    delta_package_for,
    installed_spark,
)


def credentials(**profile: object) -> SparkStreamsCredentials:
    return SparkStreamsCredentials.from_dict({"schema": "analytics", **profile})


def test_defaults_wire_delta_and_a_persistent_catalog_into_the_project(project: Path) -> None:
    confs = session_confs(credentials())
    assert confs["spark.sql.extensions"] == DELTA_EXTENSION
    assert confs["spark.sql.catalog.spark_catalog"] == DELTA_CATALOG
    assert confs["spark.sql.catalogImplementation"] == "hive"
    assert confs["spark.sql.warehouse.dir"] == str(project / "spark-warehouse")
    assert confs["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        f"jdbc:derby:;databaseName={project / 'metastore' / 'metastore_db'};create=true"
    )
    assert confs["spark.hadoop.hive.downloaded.resources.dir"] == str(
        project / "metastore" / "hive_resources"
    )
    assert confs["spark.jars.packages"] == delta_package_for(installed_spark())
    assert confs["spark.sql.shuffle.partitions"] == "4"
    assert confs["spark.sql.sources.parallelPartitionDiscovery.parallelism"] == "4"
    assert confs["spark.databricks.delta.properties.defaults.enableChangeDataFeed"] == "true"
    assert confs["spark.sql.ansi.enabled"] == "false"
    # no file list in the checksum file, which Delta re-checks after each commit outside UTC
    assert confs["spark.databricks.delta.allFilesInCrc.enabled"] == "false"


def test_relative_dirs_are_anchored_at_the_project_and_absolute_ones_kept(project: Path) -> None:
    confs = session_confs(credentials(warehouse_dir="wh", metastore_dir="/var/tmp/ms"))
    assert confs["spark.sql.warehouse.dir"] == str(project / "wh")
    assert (
        "databaseName=/var/tmp/ms/metastore_db;"
        in (confs["spark.hadoop.javax.jdo.option.ConnectionURL"])
    )


def test_server_side_parameters_win_over_the_adapter_defaults(project: Path) -> None:
    creds = credentials(
        server_side_parameters={"spark.sql.shuffle.partitions": "16", "spark.custom": "x"},
        change_data_feed=False,
    )
    confs = session_confs(creds)
    assert confs["spark.sql.shuffle.partitions"] == "16"
    assert confs["spark.custom"] == "x"
    assert confs["spark.databricks.delta.properties.defaults.enableChangeDataFeed"] == "false"


def test_jvm_options_default_to_the_quick_jit_tier_and_can_be_replaced(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    derby = f"-Dderby.system.home={project / 'metastore'}"
    options = "spark.driver.extraJavaOptions"
    assert session_confs(credentials())[options] == f"{derby} {DEFAULT_JVM_OPTIONS}"
    assert session_confs(credentials(jvm_options="-Xss4m"))[options] == f"{derby} -Xss4m"
    assert session_confs(credentials(jvm_options=""))[options] == derby
    monkeypatch.setenv("SPARK_STREAMS_FAST_START", "0")  # the start before issue 14
    assert session_confs(credentials())[options] == derby


def test_jars_dir_replaces_maven_resolution(project: Path) -> None:
    jars = project / "jars"
    jars.mkdir()
    (jars / "b.jar").write_bytes(b"")
    (jars / "a.jar").write_bytes(b"")
    confs = session_confs(credentials(jars_dir="jars"))
    assert "spark.jars.packages" not in confs
    assert confs["spark.jars"] == f"{jars / 'a.jar'},{jars / 'b.jar'}"


def test_empty_jars_dir_says_how_to_fill_it(project: Path) -> None:
    (project / "jars").mkdir()
    with pytest.raises(FailedToConnectError, match="Run `make jars`"):
        session_confs(credentials(jars_dir="jars"))


def test_missing_java_is_reported_before_spark_starts(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(project))
    with pytest.raises(FailedToConnectError, match="Spark needs Java 17"):
        embedded_session._require_java()


def test_a_spark_no_delta_supports_is_refused_before_the_jvm_starts(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded_session, "installed_spark", lambda: SparkVersion(4, 3, 0))
    with pytest.raises(FailedToConnectError, match=r"PySpark 4\.3\.0 is installed, but Delta"):
        embedded_session._require_supported_spark(credentials())
    # a Delta package of the user's own is tried as given
    embedded_session._require_supported_spark(credentials(delta_package="io.delta:x_2.13:9.9.9"))


def test_a_metastore_login_goes_to_its_own_keys_not_the_url(project: Path) -> None:
    confs = session_confs(
        credentials(metastore_url="jdbc:derby://db:1527/ms;user=app;password=hunter22;create=true")
    )
    assert confs["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        "jdbc:derby://db:1527/ms;create=true"
    )
    assert confs["spark.hadoop.javax.jdo.option.ConnectionUserName"] == "app"
    assert confs["spark.hadoop.javax.jdo.option.ConnectionPassword"] == "hunter22"
    keyed = session_confs(
        credentials(metastore_url="jdbc:postgresql://db/ms", metastore_password="from-env")
    )
    assert keyed["spark.hadoop.javax.jdo.option.ConnectionPassword"] == "from-env"
    assert "spark.hadoop.javax.jdo.option.ConnectionUserName" not in keyed


def test_a_network_metastores_pool_tests_its_connections_and_never_waits_forever(
    project: Path,
) -> None:
    derby = session_confs(credentials(metastore_url="jdbc:derby://db:1527/ms;create=true"))
    assert derby["spark.hadoop.datanucleus.connectionPool.testSQL"] == "VALUES 1"
    assert derby["spark.hadoop.datanucleus.connectionPoolingType"] == "HikariCP"
    assert derby["spark.hadoop.datanucleus.connectionPool.connectionWaitTimeout"] == "30000"
    postgres = session_confs(credentials(metastore_url="jdbc:postgresql://db/ms"))
    assert postgres["spark.hadoop.datanucleus.connectionPool.testSQL"] == "SELECT 1"
    embedded = session_confs(credentials())
    assert "spark.hadoop.datanucleus.connectionPoolingType" not in embedded
    chosen = {"spark.hadoop.datanucleus.connectionPoolingType": "DBCP"}
    mine = session_confs(
        credentials(metastore_url="jdbc:mysql://db/ms", server_side_parameters=chosen)
    )
    assert mine["spark.hadoop.datanucleus.connectionPoolingType"] == "DBCP"  # the profile's wins


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("jdbc:derby://db.internal:1527/ms;create=true", ("db.internal", 1527)),
        ("jdbc:derby://localhost/ms", ("localhost", 1527)),
        ("jdbc:postgresql://db/ms?password=x", ("db", 5432)),
        ("jdbc:mysql://app:pw@db:3307/ms", ("db", 3307)),
        ("jdbc:derby:;databaseName=/p/metastore_db;create=true", None),
        (None, None),
    ],
)
def test_the_address_a_network_metastore_answers_on(url: str | None, address: object) -> None:
    assert embedded_confs.metastore_address(url) == address


def test_an_unreachable_metastore_fails_within_the_bound_naming_it(project: Path) -> None:
    import socket
    import time

    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    creds = credentials(
        metastore_url=f"jdbc:derby://127.0.0.1:{port}/ms;user=app;password=hunter22",
        connect_timeout=2,
        connect_retries=1,
    )
    began = time.monotonic()
    with pytest.raises(FailedToConnectError) as raised:
        embedded_session._require_metastore(creds)
    assert time.monotonic() - began < 2 * 2 + 10  # the bound, plus slack for a loaded machine
    message = str(raised.value)
    assert f"The metastore at 127.0.0.1:{port}" in message and "2 attempts of 2 s" in message
    assert "hunter22" not in message and "password=*****" in message
