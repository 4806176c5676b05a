"""Spark Connect: the way to run on a cluster instead of the embedded session."""

from dbt.adapters.exceptions import FailedToConnectError
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials


def connect_session(creds: SparkStreamsCredentials) -> SparkSession:
    """A Spark Connect session to `host` (sc://...); the server owns catalog and jars."""
    builder = SparkSession.builder.remote(str(creds.host))
    for key, value in creds.server_side_parameters.items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as exc:
        raise FailedToConnectError(
            f"Could not reach the Spark Connect server at {creds.host}: {exc}. "
            "Check that it runs and that host is sc://<host>:<port>."
        ) from exc
