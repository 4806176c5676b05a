"""The one way the engine talks to Spark: SQL text in, rows as dicts out."""

from collections.abc import Callable
from typing import Any

Row = dict[str, Any]
RunSql = Callable[[str], list[Row]]
# Runs one statement with session confs set around it and only around it (a build's write:
# its offsets and Delta's idempotency pair). The adapter sets them through the session's conf
# API where it has a session (session/statement_confs.py); SQL SET / RESET (offsets/commit.py's
# `sql_confs`) serves every other connection.
RunWithConfs = Callable[[str, dict[str, str]], list[Row]]
