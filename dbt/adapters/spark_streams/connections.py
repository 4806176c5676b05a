"""Connection manager: dbt-spark's, opening the adapter's own session for local methods."""

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.spark.connections import SparkConnectionManager
from dbt.adapters.spark.session import SessionConnectionWrapper
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import (
    LOCAL_METHODS,
    SparkStreamsCredentials,
    StreamsConnectionMethod,
)
from dbt.adapters.spark_streams.session_cursor import BoundConnection


def spark_session_for(creds: SparkStreamsCredentials) -> SparkSession:
    """The session a `session` or `connect` profile runs on, started on first use."""
    if creds.method == StreamsConnectionMethod.CONNECT:
        from dbt.adapters.spark_streams.remote_session import connect_session

        return connect_session(creds)
    from dbt.adapters.spark_streams.embedded_session import start_embedded_session

    return start_embedded_session(creds)


class SparkStreamsConnectionManager(SparkConnectionManager):
    """Opens `session` and `connect` targets itself; other methods go to dbt-spark."""

    TYPE = "spark_streams"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        """Bind the connection to the adapter's session (built once per process)."""
        creds = connection.credentials
        if creds.method not in LOCAL_METHODS:
            return super().open(connection)
        if connection.state == ConnectionState.OPEN:
            return connection
        session = spark_session_for(creds)
        connection.handle = SessionConnectionWrapper(BoundConnection(session))
        connection.state = ConnectionState.OPEN
        return connection
