"""DESCRIBE HISTORY's map columns as mappings, whichever way the rows came.

The embedded session and Spark Connect hand `operationParameters` and `operationMetrics` over
as dicts. HiveServer2 (dbt-spark's `thrift` and `http` methods against a Spark Thrift Server)
hands them over as text, in the form Spark's `HiveResult.toHiveString` gives a map: entries
sorted, each `"key":"value"`, joined by commas in braces, with nothing in a value escaped. A
value may itself hold quotes and entries, as SET TBLPROPERTIES' `properties` does:

    {"isManaged":"true","properties":"{"delta.enableChangeDataFeed":"true"}"}

so the text is not JSON. It is read back here: a value ends at the first quote that is
followed by the next `,"key":` or by the closing brace and leaves the value's brackets
balanced.
"""

import re
from typing import Any

MAP_COLUMNS = ("operationParameters", "operationMetrics")
_KEY = re.compile(r'"([A-Za-z_][\w.\-]*)":')
_VALUE_END = re.compile(r'"(?=,"[A-Za-z_][\w.\-]*":|}$)')
_NULL_END = re.compile(r"null(?=,\"[A-Za-z_][\w.\-]*\":|}$)")
_OPEN, _CLOSE = "[{(", "]})"


def with_mappings(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with its history map columns as dicts (a row without them is returned as is)."""
    if not any(isinstance(row.get(column), str) for column in MAP_COLUMNS):
        return row
    return {
        name: hive_map(value) if name in MAP_COLUMNS and isinstance(value, str) else value
        for name, value in row.items()
    }


def hive_map(text: str) -> dict[str, str | None]:
    """A map<string,string> as HiveServer2 prints it, read back; ValueError if it is not one."""
    text = text.strip()
    if text in ("", "null"):
        return {}
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"not a map as HiveServer2 prints one: {text[:200]!r}")
    entries: dict[str, str | None] = {}
    at = 1
    while at < len(text) - 1:
        key = _KEY.match(text, at)
        if key is None:
            raise ValueError(f"no key at {at} of {text[:200]!r}")
        at = key.end()
        if text.startswith("null", at) and _NULL_END.match(text, at):
            entries[key[1]], at = None, at + len("null")
        elif text.startswith('"', at):
            end = _value_end(text, at + 1)
            entries[key[1]], at = text[at + 1 : end], end + 1
        else:
            raise ValueError(f"no value for {key[1]!r} in {text[:200]!r}")
        at += text.startswith(",", at)
    return entries


def _value_end(text: str, start: int) -> int:
    """Where the quoted value from `start` ends: the first closing quote candidate after which
    the value's brackets are balanced, else the first candidate."""
    candidates = [match.start() for match in _VALUE_END.finditer(text, start)]
    if not candidates:
        raise ValueError(f"an unterminated value in {text[:200]!r}")
    for end in candidates:
        if _balanced(text[start:end]):
            return end
    return candidates[0]


def _balanced(value: str) -> bool:
    depth = 0
    for char in value:
        depth += (char in _OPEN) - (char in _CLOSE)
        if depth < 0:
            return False
    return depth == 0
