"""Spark Connect: the way to run on a cluster instead of the embedded session."""

from dbt.adapters.exceptions import FailedToConnectError
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials


def new_connect_session(creds: SparkStreamsCredentials) -> SparkSession:
    """A new Spark Connect session on `host` (sc://...), with its own confs and temporary
    views on the server; the server owns catalog and jars."""
    builder = SparkSession.builder.remote(str(creds.host))
    for key, value in creds.server_side_parameters.items():
        builder = builder.config(key, value)
    try:
        return builder.create()
    except Exception as exc:
        raise FailedToConnectError(
            f"Could not reach the Spark Connect server at {creds.host}: {exc}. "
            "Check that it runs and that host is sc://<host>:<port>."
        ) from exc
