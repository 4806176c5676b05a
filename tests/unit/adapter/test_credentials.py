"""Profile parsing: defaults, the embedded session's missing host, and bad values."""

import sys

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_streams.credentials import (
    ALL_FILES_IN_CRC,
    DEFAULT_DELTA_PACKAGE,
    SparkStreamsCredentials,
    StreamsConnectionMethod,
)


def credentials(**profile: object) -> SparkStreamsCredentials:
    return SparkStreamsCredentials.from_dict({"schema": "analytics", **profile})


def test_session_is_the_default_method_and_needs_no_host() -> None:
    creds = credentials()
    assert creds.method == StreamsConnectionMethod.SESSION
    assert creds.host == "localhost"
    assert creds.type == "spark_streams"
    assert creds.delta_package == DEFAULT_DELTA_PACKAGE
    assert (creds.warehouse_dir, creds.metastore_dir, creds.jars_dir) == (None, None, None)
    assert creds.shuffle_partitions == 4
    assert creds.change_data_feed is True


def test_server_side_parameters_are_kept_as_strings() -> None:
    creds = credentials(server_side_parameters={"spark.sql.shuffle.partitions": 8})
    assert creds.server_side_parameters["spark.sql.shuffle.partitions"] == "8"


@pytest.mark.parametrize(
    "server", [{}, {"method": "thrift", "host": "spark", "port": 10000},
               {"method": "connect", "host": "sc://spark:15002"}],
)  # fmt: skip
def test_every_session_of_the_profile_leaves_the_file_list_out_of_delta_checksums(
    server: dict,
) -> None:
    # the setting reaches the embedded session's confs, a Connect session's (connect.py) and,
    # SET as it opens, a Thrift Server's session (connections.py; the compatibility project
    # over thrift reads a checksum file its build wrote)
    assert credentials(**server).server_side_parameters[ALL_FILES_IN_CRC] == "false"
    kept = credentials(**server, server_side_parameters={ALL_FILES_IN_CRC: True})
    assert kept.server_side_parameters[ALL_FILES_IN_CRC] == "true"
    with pytest.raises(DbtRuntimeError, match=f"sets {ALL_FILES_IN_CRC} to 'yes'; use true or"):
        credentials(**server, server_side_parameters={ALL_FILES_IN_CRC: "yes"})


def test_databricks_methods_keep_their_runtimes_setting() -> None:
    # `http` reaches a Databricks cluster, a runtime of its own
    databricks = credentials(method="http", host="adb.example.net", port=443, cluster="c")
    assert ALL_FILES_IN_CRC not in databricks.server_side_parameters


def test_unknown_method_is_rejected() -> None:
    with pytest.raises(Exception, match="sesion"):
        credentials(method="sesion")


def test_shuffle_partitions_must_be_positive() -> None:
    with pytest.raises(DbtRuntimeError, match="shuffle_partitions must be a positive integer"):
        credentials(shuffle_partitions=0)


def test_connect_needs_an_sc_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        SparkStreamsCredentials, "_require_connect_client", staticmethod(lambda: None)
    )
    with pytest.raises(DbtRuntimeError, match="sc://localhost:15002"):
        credentials(method="connect", host="localhost")
    assert credentials(method="connect", host="sc://spark:15002").host == "sc://spark:15002"


def test_connect_without_client_libraries_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "grpc", None)
    with pytest.raises(DbtRuntimeError, match=r"pip install 'dbt-spark-streams\[connect\]'"):
        credentials(method="connect", host="sc://spark:15002")


TOKEN = "tok-1234567890"


def test_dbt_debug_prints_every_secret_masked() -> None:
    creds = credentials(
        method="connect",
        host=f"sc://spark.example.com:443/;use_ssl=true;token={TOKEN}",
        metastore_url="jdbc:derby://db:1527/ms;user=app;password=hunter22",
    )
    shown = dict(creds.connection_info())
    assert shown["host"] == "sc://spark.example.com:443/;use_ssl=true;token=*****"
    assert shown["token"] is None
    assert not any(s in str(shown) for s in (TOKEN, "hunter22"))
    assert set(creds.secrets()) == {TOKEN, "hunter22"}
    session = credentials(metastore_url="jdbc:derby://db:1527/ms;user=app;password=hunter22")
    shown = dict(session.connection_info())
    assert shown["metastore_url"] == "jdbc:derby://db:1527/ms;user=app;password=*****"
    assert shown["metastore_password"] is None and "hunter22" not in str(shown)
    keyed = credentials(metastore_url="jdbc:derby://db:1527/ms", metastore_password="also-secret")
    assert dict(keyed.connection_info())["metastore_password"] == "*****"
    assert keyed.secrets() == ["also-secret"]


@pytest.mark.parametrize(
    "profile, shown, hidden",
    [
        ({}, {"warehouse_dir", "master", "metastore_url"}, {"host", "token", "port"}),
        (
            {"method": "connect", "host": "sc://h:15002"},
            {"host", "token", "use_ssl", "connect_timeout"},
            {"master", "delta_package", "warehouse_dir", "port"},
        ),
        (
            {"method": "thrift", "host": "127.0.0.1", "port": 10000, "user": "dbt"},
            {"host", "port", "user", "auth", "schema"},
            {"master", "delta_package", "warehouse_dir", "jars_dir", "token", "metastore_url"},
        ),
        (
            {"method": "http", "host": "h", "token": TOKEN, "cluster": "c"},
            {"host", "cluster", "token", "endpoint"},
            {"master", "delta_package", "user"},
        ),
    ],
)
def test_dbt_debug_shows_only_the_keys_of_the_method_in_use(profile, shown, hidden) -> None:
    keys = {key for key, _ in credentials(**profile).connection_info()}
    assert "method" in keys and shown <= keys and not hidden & keys


def test_the_token_and_tls_keys_join_the_connect_url() -> None:
    creds = credentials(method="connect", host="sc://h:15002", token=TOKEN, use_ssl=True)
    assert creds.connect_url() == f"sc://h:15002/;use_ssl=true;token={TOKEN}"
    assert dict(creds.connection_info())["token"] == "*****"
    plain = credentials(method="connect", host="sc://h:15002/;use_ssl=true")
    assert plain.connect_url() == "sc://h:15002/;use_ssl=true"


def test_a_token_in_host_and_in_its_key_is_refused_without_echoing_either() -> None:
    with pytest.raises(DbtRuntimeError) as raised:
        credentials(method="connect", host=f"sc://h/;token={TOKEN}", token="other-token-9")
    assert "token twice" in raised.value.msg
    assert TOKEN not in raised.value.msg and "other-token-9" not in raised.value.msg


def test_a_metastore_password_in_the_url_and_in_its_key_is_refused() -> None:
    with pytest.raises(DbtRuntimeError) as raised:
        credentials(
            metastore_url="jdbc:derby://db:1527/m;user=app;password=in-url-7",
            metastore_password="in-key-8",
        )
    assert "password twice" in raised.value.msg and "metastore_password" in raised.value.msg
    assert "in-url-7" not in raised.value.msg and "in-key-8" not in raised.value.msg


def test_a_bad_connect_url_is_named_without_its_token() -> None:
    with pytest.raises(DbtRuntimeError) as raised:
        credentials(method="connect", host=f"spark.example.com/;token={TOKEN}")
    assert TOKEN not in raised.value.msg and "token=*****" in raised.value.msg
