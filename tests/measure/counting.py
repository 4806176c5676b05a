"""Counting the Spark statements one Python process runs: each statement the adapter's cursor
executes (whether Spark or the driver answers it), and each `SparkSession.sql` call a test
makes itself (the functional tests that drive Spark directly).

Used in the pytest workers (plugin.py) and in the dbt processes they start
(site/sitecustomize.py). Each statement appends one line, the test it belongs to, to a file of
its own process's, so a process killed mid-build (the crash tests) has counted up to its end.
"""

import os
import re
import threading
import time
from pathlib import Path
from typing import Any

DIR_ENV = "SPARK_STREAMS_MEASURE_DIR"
# Set to 1 to also write each statement's whole text to <dir>/statements-<pid>.sql.
SQL_ENV = "SPARK_STREAMS_MEASURE_SQL"
TEST_ENV = "SPARK_STREAMS_MEASURE_TEST"
# A file per process: <dir>/statements-<pid>.log, a line per statement: its test's node id and
# its kind (its first words), tab-separated. And <dir>/seconds-<pid>.log: a line per statement
# the adapter's cursor finished, its kind and its seconds.
PATTERN = "statements-*.log"
SECONDS = "seconds-*.log"
COMMENT = re.compile(r"/\*.*?\*/|--[^\n]*", re.DOTALL)
# How many leading words name a statement's kind: `create or replace table`, `describe history`.
KIND_WORDS = {"create": 4, "describe": 2, "show": 2, "alter": 2, "drop": 2, "insert": 2}


def kind(sql: str) -> str:
    """A statement's first words, lower case, without comments: what kind of statement it is."""
    words = COMMENT.sub(" ", str(sql)).lower().split()
    if not words:
        return "(empty)"
    return " ".join(words[: KIND_WORDS.get(words[0], 1)])


def install() -> None:
    """Count every statement of this process into its own file, from now on."""
    from dbt.adapters.spark_streams.session import cursor

    folder = Path(os.environ[DIR_ENV])
    log = (folder / f"statements-{os.getpid()}.log").open("a", buffering=1)
    timed = (folder / f"seconds-{os.getpid()}.log").open("a", buffering=1)
    texts = None
    if os.environ.get(SQL_ENV) == "1":
        texts = (folder / f"statements-{os.getpid()}.sql").open("a", buffering=1)
    inside = threading.local()

    def count(sql: str) -> None:
        test = os.environ.get(TEST_ENV, "")
        log.write(test + "\t" + kind(sql) + "\n")
        if texts is not None:
            texts.write(f"-- {test}\n{sql};\n")

    execute = cursor.BoundCursor.execute

    def counted_execute(self: Any, sql: str, *parameters: Any) -> None:
        count(sql)
        inside.cursor = True
        began = time.monotonic()
        try:
            execute(self, sql, *parameters)
        finally:
            inside.cursor = False
            took = time.monotonic() - began
            timed.write(f"{kind(sql)}\t{took:.4f}\n")
            if texts is not None:
                texts.write(f"-- took {took:.3f} s\n")

    cursor.BoundCursor.execute = counted_execute  # type: ignore[method-assign]
    for session_class in _session_classes():
        sql = session_class.sql

        def counted_sql(self: Any, query: Any, *args: Any, _sql: Any = sql, **kwargs: Any) -> Any:
            if not getattr(inside, "cursor", False):
                count(query)
            return _sql(self, query, *args, **kwargs)

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


def read_counts(folder: Path) -> dict[tuple[str, str], int]:
    """Statements per test node id and kind, over every process that counted into `folder`."""
    counts: dict[tuple[str, str], int] = {}
    for log in folder.glob(PATTERN):
        for line in log.read_text().splitlines():
            nodeid, _, sort = line.partition("\t")
            counts[(nodeid, sort)] = counts.get((nodeid, sort), 0) + 1
    return counts


def read_seconds(folder: Path) -> dict[str, float]:
    """The adapter's statements' seconds per kind, over every process that timed into `folder`."""
    seconds: dict[str, float] = {}
    for log in folder.glob(SECONDS):
        for line in log.read_text().splitlines():
            sort, _, took = line.rpartition("\t")
            if sort:
                seconds[sort] = seconds.get(sort, 0.0) + float(took)
    return seconds
