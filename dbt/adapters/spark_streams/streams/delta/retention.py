"""A source's retention, read from its table properties, and the extension streams ask for.

Streams keep a source readable the way Snowflake's MAX_DATA_EXTENSION_TIME_IN_DAYS does: the
source's `delta.deletedFileRetentionDuration` and `delta.logRetentionDuration` are raised to
`max_data_extension_time` days when they are shorter, so an unconsumed stream survives that
long. Delta has no temporary retention, so the raised value stays; it is never lowered.
"""

import re
from dataclasses import dataclass
from datetime import timedelta

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.quoting import string_literal

DELETED_FILES = "delta.deletedFileRetentionDuration"
LOG = "delta.logRetentionDuration"
DEFAULTS = {DELETED_FILES: timedelta(weeks=1), LOG: timedelta(days=30)}
UNITS = {
    "week": timedelta(weeks=1),
    "day": timedelta(days=1),
    "hour": timedelta(hours=1),
    "minute": timedelta(minutes=1),
    "second": timedelta(seconds=1),
    "millisecond": timedelta(milliseconds=1),
    "microsecond": timedelta(microseconds=1),
}
TERM = re.compile(r"(-?\d+)\s*([a-z]+?)s?\b")


def parse_interval(text: str) -> timedelta:
    """Delta's interval strings ('interval 1 week', '30 days', '2 hours 30 minutes')."""
    body = text.strip().lower().removeprefix("interval").strip()
    terms = TERM.findall(body)
    if not terms or TERM.sub("", body).strip():
        raise ValueError(f"not an interval: {text!r}")
    total = timedelta()
    for amount, unit in terms:
        if unit not in UNITS:
            raise ValueError(f"unknown interval unit {unit!r} in {text!r}")
        total += int(amount) * UNITS[unit]
    return total


def format_interval(duration: timedelta) -> str:
    """A duration as Delta spells intervals: '7 days', '2 hours 30 minutes'."""
    parts, rest = [], duration
    for unit in ("day", "hour", "minute", "second"):
        count, rest = divmod(rest, UNITS[unit])
        if count:
            parts.append(f"{count} {unit}{'s' if count != 1 else ''}")
    return " ".join(parts) or "0 seconds"


@dataclass(frozen=True)
class Retention:
    """How long a source keeps removed files and log entries."""

    deleted_files: timedelta
    log: timedelta

    @classmethod
    def from_properties(cls, properties: dict) -> "Retention":
        return cls(
            deleted_files=_property(properties, DELETED_FILES),
            log=_property(properties, LOG),
        )

    @property
    def readable_for(self) -> timedelta:
        """How long after a commit its changes can still be read."""
        return min(self.deleted_files, self.log)


def _property(properties: dict, key: str) -> timedelta:
    value = properties.get(key)
    return DEFAULTS[key] if value is None else parse_interval(str(value))


def extension_days(value: object, model: str) -> int:
    """The model's max_data_extension_time in whole days; 0 turns the extension off."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StreamError(
            f"Model {model}: max_data_extension_time must be a whole number of days (0 turns the "
            f"retention extension off), not {value!r}."
        )
    return value


def retention_extension(source: str, current: Retention, days: int) -> tuple[str, list[str]]:
    """The ALTER TABLE raising the source's retention to `days` and what it changes, if needed."""
    wanted = timedelta(days=days)
    changes = {
        key: have
        for key, have in ((DELETED_FILES, current.deleted_files), (LOG, current.log))
        if have < wanted
    }
    if not changes:
        return "", []
    settings = ", ".join(f"{key} = {string_literal(f'interval {days} days')}" for key in changes)
    return f"alter table {source} set tblproperties ({settings})", [
        f"{source}: {key} raised from {format_interval(have)} to {days} days so unconsumed "
        "streams stay readable (max_data_extension_time)"
        for key, have in changes.items()
    ]
