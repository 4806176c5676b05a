"""The one way the engine talks to Spark: SQL text in, rows as dicts out."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Row = dict[str, Any]
RunSql = Callable[[str], list[Row]]
# Runs one statement with session confs set around it and only around it (a build's write:
# its offsets and Delta's idempotency pair). The adapter sets them through the session's conf
# API where it has a session (session/statement_confs.py); SQL SET / RESET (offsets/commit.py's
# `sql_confs`) serves every other connection.
RunWithConfs = Callable[[str, dict[str, str]], list[Row]]


@contextmanager
def described_once(run: RunSql) -> Iterator[RunSql]:
    """`run`, answering a DESCRIBE TABLE EXTENDED it already ran from its first answer, until
    a statement other than a DESCRIBE or SHOW runs, and only inside the `with`: one stream's
    resolution describes its source where its kind is chosen and again where it is read (a
    view, then each of the view's tables)."""
    seen: dict[str, list[Row]] = {}
    inside = True

    def once(sql: str) -> list[Row]:
        if not inside:
            return run(sql)
        if sql.startswith("describe table extended "):
            if sql not in seen:
                seen[sql] = run(sql)
            return list(seen[sql])
        if not sql.startswith(("describe ", "show ")):
            seen.clear()
        return run(sql)

    try:
        yield once
    finally:
        inside = False
