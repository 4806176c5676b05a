"""The table states points name, as Snowflake's AT | BEFORE do: at a version or a time, the
state that includes that point's commit; before it, the state just ahead of it."""

from datetime import datetime

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql


def state_version(run: RunSql, source: str, point: dict, at: bool) -> int:
    """The version of the table state a point names (see `state_in_history`)."""
    if "version" in point:
        return state_in_history([], source, point, at)
    return state_in_history(run(f"describe history {source}"), source, point, at)


def whole_version(value: object) -> int:
    """A point's version: a whole number (7 or '7'), not 7.5, True or '7; drop table x'."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise ValueError(f"the version must be a whole number, not {value!r}")


def state_in_history(history: list[Row], source: str, point: dict, at: bool) -> int:
    """The version of the table state a point names: at version n, n; before it, n - 1; at a
    timestamp, the newest version in `history` (DESCRIBE HISTORY rows) committed at or before
    it (Delta's TIMESTAMP AS OF); before a timestamp, the newest committed strictly before it."""
    if "version" in point:
        version = whole_version(point["version"])
        return version if at else version - 1
    if "timestamp" in point:
        moment = datetime.fromisoformat(str(point["timestamp"]))
        committed = [
            int(row["version"])
            for row in history
            if row["timestamp"] < moment or (at and row["timestamp"] == moment)
        ]
        if committed:
            return max(committed)
        first = min(history, key=lambda row: int(row["version"]))
        raise StreamError(
            f"Point {point!r} on {source}: the table has no state "
            f"{'at' if at else 'before'} {moment}; its history begins with version "
            f"{first['version']}, committed at {first['timestamp']}. Give a later point."
        )
    raise StreamError(
        f"Point {point!r} on {source}: give {{'version': n}} or {{'timestamp': '...'}}."
    )
