"""A dbt-spark session cursor bound to one SparkSession, embedded or Spark Connect.

dbt-spark's cursor rebuilds a session through `SparkSession.builder` on every statement, which
cannot reach a Spark Connect server and re-applies confs each time. Binding the cursor to the
session the adapter built keeps dbt-spark's result handling and drops both problems.
"""

from typing import Any

from dbt.adapters.spark.session import Connection, Cursor
from dbt_common.exceptions import DbtRuntimeError
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession


class BoundCursor(Cursor):
    """dbt-spark's cursor, executing on a given session."""

    def __init__(self, session: SparkSession) -> None:
        super().__init__()
        self.session = session

    def execute(self, sql: str, *parameters: Any) -> None:
        """Run one statement; analysis errors become dbt errors as in dbt-spark."""
        if parameters:
            sql = sql % parameters
        try:
            self._df = self.session.sql(sql)
        except AnalysisException as exc:
            raise DbtRuntimeError(str(exc)) from exc


class BoundConnection(Connection):
    """dbt-spark's session connection handing out cursors bound to one session."""

    def __init__(self, session: SparkSession, release_on_close: bool = False) -> None:
        super().__init__()
        self.session = session
        self.release_on_close = release_on_close

    def cursor(self) -> BoundCursor:
        """A fresh cursor on the bound session."""
        return BoundCursor(self.session)

    def release(self) -> None:
        """Give back a session opened for this connection alone (a Spark Connect one)."""
        if self.release_on_close:
            self.session.stop()
