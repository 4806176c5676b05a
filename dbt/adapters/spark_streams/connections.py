"""Connection manager: dbt-spark's, opening an isolated Spark session per dbt connection.

dbt runs every thread's nodes on that thread's own connection. A Spark session's SQL confs and
temporary views are session-wide, and a stream build sets confs around its write (the offsets
in `userMetadata`, Delta's idempotency pair): on one shared session, another thread's write
would run under them. So each connection gets a session of its own, on the process's one
Spark (embedded: `newSession()`, which shares the context, catalog and cache; Spark Connect: a
new server session), and what one build sets is never seen by another's statements.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError
from dbt.adapters.spark.connections import SparkConnectionManager
from dbt.adapters.spark.session import SessionConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import (
    LOCAL_METHODS,
    SparkStreamsCredentials,
    StreamsConnectionMethod,
)
from dbt.adapters.spark_streams.session.bindings import spark_literal
from dbt.adapters.spark_streams.session.cursor import BoundConnection
from dbt.adapters.spark_streams.session.servers.lost_servers import (
    HIVESERVER2_METHODS,
    chain,
    lost_message,
    thrift_error,
)
from dbt.adapters.spark_streams.session.servers.thrift_session import with_session_parameters
from dbt.adapters.spark_streams.streams.errors import SparkUnreachable


def isolated_session(creds: SparkStreamsCredentials) -> tuple[SparkSession, bool]:
    """A session of its own for one dbt connection, and whether closing it must release it.

    Embedded: a child of the process's session (its own SQL conf and temporary views, the
    shared context, catalog and cache), which needs no release. Spark Connect: a new session
    on the server, released when the connection closes.
    """
    if creds.method == StreamsConnectionMethod.CONNECT:
        from dbt.adapters.spark_streams.session.servers.connect import new_connect_session

        return new_connect_session(creds), True
    from dbt.adapters.spark_streams.session.embedded import start_embedded_session

    return start_embedded_session(creds).newSession(), False


logger = AdapterLogger("SparkStreams")


def unreachable_server(creds: SparkStreamsCredentials, error: FailedToConnectError) -> str:
    """dbt-spark's "failed to connect: TTransportException: ..." for a HiveServer2 method as a
    sentence naming the address, the attempts and what to check; other methods' as it is."""
    said = str(error.msg if hasattr(error, "msg") else error).removeprefix("failed to connect: ")
    if StreamsConnectionMethod(creds.method) not in HIVESERVER2_METHODS:
        return said
    attempts = 1 + max(0, creds.connect_retries)
    return (
        f"No Spark Thrift Server answered at {creds.host}:{creds.port} ({said}; {attempts} "
        f"attempt{'s' if attempts > 1 else ''}, connect_retries + 1). Check that the server "
        "runs and listens on that host and port (HiveServer2's default is 10000), and that "
        "nothing between blocks the port."
    )


class StreamsConnectionWrapper(SessionConnectionWrapper):
    """dbt-spark's session wrapper; closing it also releases a Spark Connect session."""

    handle: BoundConnection

    @classmethod
    def _fix_binding(cls, value: Any) -> str:
        """A bound value (a seed's cell) as a Spark SQL literal (see session/bindings.py)."""
        return spark_literal(value)

    def close(self) -> None:
        """Close the cursor, then release the connection's own session where it has one."""
        super().close()
        self.handle.release()


class SparkStreamsConnectionManager(SparkConnectionManager):
    """Opens `session` and `connect` targets itself; other methods go to dbt-spark."""

    TYPE = "spark_streams"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        """Bind the connection to a Spark session of its own (see the module docstring)."""
        creds = connection.credentials
        if creds.method not in LOCAL_METHODS:
            found_gone = lost_message(f"{creds.host}:{creds.port}")
            if found_gone is not None:
                raise FailedToConnectError(f"{found_gone} (found earlier in this run)")
            was_open = connection.state == ConnectionState.OPEN
            try:
                opened = super().open(connection)
            except FailedToConnectError as exc:
                raise FailedToConnectError(unreachable_server(creds, exc)) from exc
            thrift = creds.method == StreamsConnectionMethod.THRIFT
            return with_session_parameters(opened) if thrift and not was_open else opened
        if connection.state == ConnectionState.OPEN:
            return connection
        session, release_on_close = isolated_session(creds)
        address = str(creds.host) if release_on_close else None  # Spark Connect's
        bound = BoundConnection(session, release_on_close, address)
        connection.handle = StreamsConnectionWrapper(bound)
        connection.state = ConnectionState.OPEN
        return connection

    @classmethod
    def _close_handle(cls, connection: Connection) -> None:
        """Close the handle; a HiveServer2 session whose server is gone cannot be closed, and
        the error of closing it would hide the model's own (the lost server's sentence)."""
        try:
            super()._close_handle(connection)
        except Exception as exc:
            method = StreamsConnectionMethod(connection.credentials.method)
            if method not in HIVESERVER2_METHODS or not any(
                type(e).__name__ == "TTransportException" or isinstance(e, OSError)
                for e in chain(exc)
            ):
                raise
            logger.debug(f"Closing a connection to a lost server: {exc}")

    def execute(
        self, sql: str, auto_begin: bool = False, fetch: bool = False, limit: int | None = None
    ) -> Any:
        """dbt's, with a HiveServer2 failure found after its exception handler (dbt reads a
        result's columns and rows there: a result the server cannot describe, a server lost
        while it sends them) said in a sentence, as the handler says it; PyHive's error came
        out raw."""
        try:
            return super().execute(sql, auto_begin, fetch, limit)
        except DbtRuntimeError:
            raise
        except Exception as exc:
            said = self._in_a_sentence(exc)
            if said is None:
                raise
            raise said from None

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        """dbt-spark's, except that a lost Spark keeps its type: dbt-spark re-raises every
        error as a plain DbtRuntimeError, and the engine must tell a lost server from a
        failed statement (it does not blame a stream's source for it)."""
        try:
            with super().exception_handler(sql):
                yield
        except DbtRuntimeError as exc:
            cause = exc.__context__
            if isinstance(cause, SparkUnreachable):
                raise cause from None
            said = self._in_a_sentence(exc)
            if said is None:
                raise
            raise said from None

    def _in_a_sentence(self, error: BaseException) -> Exception | None:
        """A HiveServer2 failure told in a sentence (lost_servers.thrift_error), where this
        manager has a profile; None for any other error."""
        creds = getattr(getattr(self, "profile", None), "credentials", None)
        return thrift_error(creds, error) if creds is not None else None
