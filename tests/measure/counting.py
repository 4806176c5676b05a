"""Counting the Spark statements one Python process runs: each statement the adapter's cursor
executes (whether Spark or the driver answers it), and each `SparkSession.sql` call a test
makes itself (the functional tests that drive Spark directly).

Used in the pytest workers (plugin.py) and in the dbt processes they start
(site/sitecustomize.py). Each statement appends one line, the test it belongs to, to a file of
its own process's, so a process killed mid-build (the crash tests) has counted up to its end.
"""

import os
import threading
from pathlib import Path
from typing import Any

DIR_ENV = "SPARK_STREAMS_MEASURE_DIR"
TEST_ENV = "SPARK_STREAMS_MEASURE_TEST"
# A file per process: <dir>/statements-<pid>.log, one test node id a line.
PATTERN = "statements-*.log"


def install() -> None:
    """Count every statement of this process into its own file, from now on."""
    from dbt.adapters.spark_streams.session import cursor

    log = (Path(os.environ[DIR_ENV]) / f"statements-{os.getpid()}.log").open("a", buffering=1)
    inside = threading.local()

    def count() -> None:
        log.write(os.environ.get(TEST_ENV, "") + "\n")

    execute = cursor.BoundCursor.execute

    def counted_execute(self: Any, sql: str, *parameters: Any) -> None:
        count()
        inside.cursor = True
        try:
            execute(self, sql, *parameters)
        finally:
            inside.cursor = False

    cursor.BoundCursor.execute = counted_execute  # type: ignore[method-assign]
    for session_class in _session_classes():
        sql = session_class.sql

        def counted_sql(self: Any, *args: Any, _sql: Any = sql, **kwargs: Any) -> Any:
            if not getattr(inside, "cursor", False):
                count()
            return _sql(self, *args, **kwargs)

        session_class.sql = counted_sql


def _session_classes() -> list[Any]:
    from pyspark.sql.session import SparkSession

    classes: list[Any] = [SparkSession]
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        classes.append(ConnectSession)
    except ImportError:  # the Spark Connect client is not installed
        pass
    return classes


def read_counts(folder: Path) -> dict[str, int]:
    """Statements per test node id, over every process that counted into `folder`."""
    counts: dict[str, int] = {}
    for log in folder.glob(PATTERN):
        for line in log.read_text().splitlines():
            counts[line] = counts.get(line, 0) + 1
    return counts
