"""A HiveServer2 method's failure to connect, as the user reads it."""

import pytest
from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.connections import unreachable_server
from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials

REFUSED = (
    "failed to connect: TTransportException: Could not connect to any of [('10.0.0.5', 10001)]"
)


def creds(**profile: object) -> SparkStreamsCredentials:
    return SparkStreamsCredentials.from_dict({"schema": "s", "host": "10.0.0.5", **profile})


@pytest.mark.parametrize("method", ["thrift", "http"])
def test_an_unanswered_thrift_server_is_one_sentence(method):
    said = unreachable_server(
        creds(method=method, port=10001, connect_retries=2), FailedToConnectError(REFUSED)
    )
    assert said == (
        "No Spark Thrift Server answered at 10.0.0.5:10001 (TTransportException: Could not "
        "connect to any of [('10.0.0.5', 10001)]; 3 attempts, connect_retries + 1). Check that "
        "the server runs and listens on that host and port (HiveServer2's default is 10000), "
        "and that nothing between blocks the port."
    )


def test_other_methods_keep_dbt_sparks_words():
    odbc = creds(method="thrift", port=443)
    odbc.method = "odbc"  # type: ignore[assignment]  # (validating odbc needs pyodbc)
    error = FailedToConnectError("failed to connect: Error: ODBC driver missing")
    assert unreachable_server(odbc, error) == "Error: ODBC driver missing"


class TTransportException(Exception):
    """Thrift's transport error, as PyHive raises it when the server goes (by name only)."""


def test_a_lost_thrift_server_is_one_sentence_found_once_per_run():
    from dbt.adapters.spark_streams.session.servers.lost_servers import (
        forget_lost_servers,
        thrift_server_lost,
    )

    forget_lost_servers()
    thrift = creds(method="thrift", port=10001)
    try:
        raise RuntimeError("TSocket read 0 bytes") from TTransportException("TSocket read 0 bytes")
    except RuntimeError as wrapped:
        said = thrift_server_lost(thrift, wrapped)
    assert said is not None
    assert said.startswith(
        "The Spark Thrift Server at 10.0.0.5:10001 stopped answering (TTransportException: "
        "TSocket read 0 bytes). If the server had received this model's write, it may have "
        "committed it"
    )
    # the first finding stays the run's message; other errors are not a lost server
    assert thrift_server_lost(thrift, TTransportException("unexpected exception")) == said
    assert thrift_server_lost(thrift, ValueError("[TABLE_OR_VIEW_NOT_FOUND]")) is None
    forget_lost_servers()


def test_a_variant_result_over_thrift_is_one_sentence_naming_the_method():
    from dbt.adapters.spark_streams.session.servers.lost_servers import thrift_refusal

    # PyHive raises the server's response as the error's text
    error = RuntimeError(
        "TGetResultSetMetadataResp(status=TStatus(statusCode=3, infoMessages=['*java.lang."
        "RuntimeException:java.lang.IllegalArgumentException: Unrecognized type name: "
        "variant:19:18'"
    )
    said = thrift_refusal(creds(method="thrift", port=10001), error)
    assert said is not None
    assert said.startswith("The Spark Thrift Server at 10.0.0.5:10001 cannot return a VARIANT")
    assert "method: connect or session" in said
    assert thrift_refusal(creds(method="thrift"), ValueError("[PARSE_SYNTAX_ERROR]")) is None
    assert thrift_refusal(creds(host="sc://h:1", method="connect"), error) is None
