"""A dbt-spark session cursor bound to one SparkSession, embedded or Spark Connect.

dbt-spark's cursor rebuilds a session through `SparkSession.builder` on every statement, which
cannot reach a Spark Connect server and re-applies confs each time. Binding the cursor to the
session the adapter built keeps dbt-spark's result handling and drops both problems.

Every call that reaches Spark raises Spark's errors as dbt errors with Spark's (or Delta's)
error class and message (see session/errors.py): a statement fails in `execute`, a query at
its first row (on Spark Connect, a query is only analysed when its schema or rows are asked
for). DESCRIBE HISTORY of a Delta table is read on the driver where the session allows it
(session/driver/history.py): the same rows without a Spark job; so is the listing of a file
table's folder for an insert-only stream (session/driver/file_listing.py).
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from dbt.adapters.spark.session import Connection, Cursor
from pyspark.sql import Row, SparkSession

from dbt.adapters.spark_streams.session.driver.detail import detail_frame
from dbt.adapters.spark_streams.session.driver.file_listing import DriverListings
from dbt.adapters.spark_streams.session.driver.history import history_frame
from dbt.adapters.spark_streams.session.errors import readable_spark_errors
from dbt.adapters.spark_streams.session.servers.lost_servers import (
    lost_message,
    note_lost,
    server_unavailable,
)
from dbt.adapters.spark_streams.session.statement_confs import restore_confs
from dbt.adapters.spark_streams.streams.delta.schema_changes import (
    INCOMPATIBLE,
    READ_ACROSS_MARKER,
    REPLACED_MARKER,
    RETRY_ACROSS_MARKER,
    UNSAFE_READ,
)
from dbt.adapters.spark_streams.streams.errors import SparkUnreachable

NOT_SET = object()


class ReadAcrossSwitch:
    """Delta's check of change reads across schema changes, off for a statement whose SQL holds
    a changes() read the engine found safe to read so (streams/delta/schema_changes.py), and
    back as it was for the connection's next statement. It stays off until then: a query is
    planned again when its rows are fetched (over Spark Connect, by the server). One per
    connection, since dbt takes a fresh cursor for each statement."""

    def __init__(self, session: SparkSession) -> None:
        self.session = session
        self.before: Any = NOT_SET

    def set(self, on: bool) -> None:
        if self.before is not NOT_SET:
            restore_confs(self.session, {UNSAFE_READ: self.before})
            self.before = NOT_SET
        if on:
            self.before = self.session.conf.get(UNSAFE_READ, None)
            self.session.conf.set(UNSAFE_READ, "true")


class BoundCursor(Cursor):
    """dbt-spark's cursor, executing on a given session."""

    def __init__(
        self,
        session: SparkSession,
        address: str | None = None,
        switch: ReadAcrossSwitch | None = None,
        listings: DriverListings | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.address = address
        self.switch = switch or ReadAcrossSwitch(session)
        self.listings = listings or DriverListings(session)

    @contextmanager
    def _spark_errors(self) -> Iterator[None]:
        """Spark's errors as dbt errors; a Spark Connect server found gone is noted, so the
        rest of the invocation fails at once (session/servers/lost_servers.py)."""
        try:
            with readable_spark_errors():
                yield
        except Exception as exc:
            if self.address and server_unavailable(exc):
                note_lost(self.address, str(getattr(exc, "msg", exc)))
            found_gone = lost_message(self.address) if self.address else None
            if found_gone is not None and not isinstance(exc, SparkUnreachable):
                # another thread found the server gone, and this session's error (no active
                # session, a closed channel) only follows from it: say what happened
                raise SparkUnreachable(f"{found_gone} (found earlier in this run)") from exc
            raise

    def execute(self, sql: str, *parameters: Any) -> None:
        """Run one statement (a query is planned, and run when its rows are fetched)."""
        if parameters:
            sql = sql % parameters
        with self._spark_errors():
            self.switch.set(READ_ACROSS_MARKER in sql and REPLACED_MARKER not in sql)
            on_driver = history_frame(self.session, sql)
            if on_driver is None:
                on_driver = detail_frame(self.session, sql)
            if on_driver is None:
                on_driver = self.listings.frame(sql)
            self._df = self._run(sql) if on_driver is None else on_driver

    def _run(self, sql: str) -> Any:
        """The statement; once more with Delta's check off if Delta refused a changes() read
        the engine marked as possibly crossing a MERGE that evolved the schema unseen (the
        refused statement wrote nothing)."""
        try:
            return self.session.sql(sql)
        except Exception as exc:
            retry = RETRY_ACROSS_MARKER in sql and REPLACED_MARKER not in sql
            if not retry or INCOMPATIBLE not in str(exc):
                raise
        self.switch.set(True)
        return self.session.sql(sql)

    @property
    def description(self) -> Sequence[tuple]:
        """The result's columns, as dbt-spark describes them."""
        with self._spark_errors():
            return super().description

    def fetchall(self) -> list[Row] | None:
        """Every row of the result: where a query's run-time errors surface."""
        with self._spark_errors():
            return super().fetchall()

    def fetchone(self) -> Row | None:
        """The result's next row."""
        with self._spark_errors():
            return super().fetchone()


class BoundConnection(Connection):
    """dbt-spark's session connection handing out cursors bound to one session."""

    def __init__(
        self, session: SparkSession, release_on_close: bool = False, address: str | None = None
    ) -> None:
        super().__init__()
        self.session = session
        self.release_on_close = release_on_close
        self.address = address  # a Spark Connect server's, as the profile's host names it
        self.switch = ReadAcrossSwitch(session)
        self.listings = DriverListings(session)

    def cursor(self) -> BoundCursor:
        """A fresh cursor on the bound session."""
        return BoundCursor(self.session, self.address, self.switch, self.listings)

    def release(self) -> None:
        """Give back a session opened for this connection alone (a Spark Connect one)."""
        if self.release_on_close:
            self.session.stop()
