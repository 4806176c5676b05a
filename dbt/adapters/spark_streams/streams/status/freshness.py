"""The stream_fresh test: which of a model's streams are stale, or will be within a window.

A stream goes stale when its oldest unread commit leaves the source's retention
(`stale_after`); a schedule that consumes it later loses data. The test turns that deadline
into a warning or an error ahead of time, so `dbt build` and schedulers alert first.
"""

from datetime import datetime, timedelta
from typing import Any

ERROR = "error"
WARN = "warn"


def freshness_failures(
    streams: list[dict[str, Any]],
    target: str,
    warn_after_hours: float | None,
    error_after_hours: float | None,
    now: datetime,
) -> list[dict[str, str]]:
    """{stream, level, reason} for each stream consumed into `target` (schema.table) that is
    stale (error), goes stale within error_after_hours (error) or warn_after_hours (warn)."""
    failures = []
    for stream in streams:
        if _table_name(stream["target_table"]) != _table_name(target):
            continue
        found = _failure(stream, warn_after_hours, error_after_hours, now)
        if found is not None:
            failures.append({"stream": stream["name"], "level": found[0], "reason": found[1]})
    return failures


def _failure(
    stream: dict[str, Any], warn_hours: float | None, error_hours: float | None, now: datetime
) -> tuple[str, str] | None:
    if stream["stale"]:
        return ERROR, stream.get("stale_reason") or "the stream is stale"
    deadline = stream.get("stale_after")
    if deadline is None:
        return None
    hours_left = (deadline - now) / timedelta(hours=1)
    for level, window in ((ERROR, error_hours), (WARN, warn_hours)):
        if window is not None and hours_left <= window:
            setting = f"{level}_after_hours"
            return level, (
                f"goes stale at {deadline:%Y-%m-%d %H:%M:%S} (in {hours_left:.1f} hours, "
                f"within {setting}: {window}); build the model before then"
            )
    return None


def _table_name(name: str) -> str:
    """`schema`.`table`, schema.table and SCHEMA.TABLE name one table."""
    return name.replace("`", "").lower()
