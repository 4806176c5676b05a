"""The one way the engine talks to Spark: SQL text in, rows as dicts out."""

from collections.abc import Callable
from typing import Any

Row = dict[str, Any]
RunSql = Callable[[str], list[Row]]
