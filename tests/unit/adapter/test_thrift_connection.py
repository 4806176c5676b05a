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
