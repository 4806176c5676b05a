"""Staleness: whether Delta can still read a stream's pending changes, and until when.

Delta refuses a change read whose first commit is older than the source's
`delta.deletedFileRetentionDuration` (DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION
_DURATION), log cleanup removes commits older than `delta.logRetentionDuration`, and a range
with Change Data Feed off has no change data. A stream is checked against all three before
anything is written, from the history of its pending commits only, so the cost follows the
number of commits since the offset and not the age of the table.
"""

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from dbt.adapters.spark_streams.streams.delta.retention import Retention, format_interval
from dbt.adapters.spark_streams.streams.delta.source import CDF_PROPERTY, SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql

WARN_WITHIN = timedelta(hours=24)
# The source's history is read newest first: its newest commit alone (a stream with nothing
# pending needs no more, and every commit read costs a GET and two HEADs on an object store),
# then exactly the commits back to the offset's own, which the newest version says.
FIRST_PAGE = 1


@dataclass(frozen=True)
class CommitsSinceOffset:
    """The source's commits after a stream's offset, oldest first, up to the pinned version."""

    source: str
    offset: int
    pin: int
    commits: tuple[Row, ...]
    offset_time: datetime | None = None
    latest: SourceVersion | None = None
    offset_commit: Row | None = None

    @property
    def first(self) -> Row | None:
        return self.commits[0] if self.commits else None

    def log_is_complete(self) -> bool:
        return bool(self.commits) and int(self.commits[0]["version"]) == self.offset + 1


def commits_since_offset(
    run: RunSql,
    source: str,
    offset: int,
    offset_time: datetime | None = None,
    pin: int | None = None,
) -> CommitsSinceOffset:
    """History of the versions offset+1..pin (default: the newest), the offset's own commit
    (to tell the table is still the same one, see identity.py) and the newest version.

    One read of the recent history answers what a build pins and what it will read, unless
    the offset is older than the commits read (see HISTORY_PAGES).
    """
    rows = _history_back_to(run, source, offset)
    latest = SourceVersion.from_history(rows[0])
    last = latest.version if pin is None else pin
    in_range = sorted(
        (row for row in rows if offset < int(row["version"]) <= last),
        key=lambda row: int(row["version"]),
    )
    offset_commit = next((row for row in rows if int(row["version"]) == offset), None)
    return CommitsSinceOffset(
        source, offset, last, tuple(in_range), offset_time, latest, offset_commit
    )


def _history_back_to(run: RunSql, source: str, offset: int) -> list[Row]:
    """The source's newest commits, newest first, back to the offset's commit if it is kept
    (log cleanup may have removed it: then all there is)."""
    page = FIRST_PAGE
    while True:
        rows = run(f"describe history {source} limit {page}")
        if len(rows) < page or int(rows[-1]["version"]) <= offset:
            return rows
        # a commit landing between two reads moves the newest version: read again, wider
        wider = int(rows[0]["version"]) - offset + 1
        if wider <= page:
            return rows
        page = wider


def stale_after(pending: CommitsSinceOffset, retention: Retention) -> datetime | None:
    """When the oldest unread commit leaves retention; None while nothing is unread."""
    if pending.first is None:
        return None
    return pending.first["timestamp"] + retention.readable_for


def check_readable(
    stream: str, pending: CommitsSinceOffset, retention: Retention, change_data_feed_now: bool
) -> None:
    """Raise a StreamError naming the stream, its offset and the fix if Delta cannot read it."""
    reason = stale_reason(pending, retention, change_data_feed_now)
    if reason is None:
        return
    why, earliest = reason
    raise StreamError(
        f"Stream {stream} is stale: {why}. Its offset is version {pending.offset} of "
        f"{pending.source}{_committed(pending.offset_time)}; the earliest version Delta can "
        f"still read changes from is {earliest}. Rebuild the consumer with --full-refresh to "
        "recreate the stream (it starts again from the current rows); consume streams more "
        "often than the source's retention, or raise delta.deletedFileRetentionDuration, to "
        "avoid this."
    )


def _committed(moment: datetime | None) -> str:
    return f" (committed {moment:%Y-%m-%d %H:%M:%S})" if moment else ""


def stale_reason(
    pending: CommitsSinceOffset, retention: Retention, change_data_feed_now: bool
) -> tuple[str, int] | None:
    """Why the pending range is unreadable and the earliest readable version, or None."""
    if pending.pin <= pending.offset:
        return None
    if not pending.log_is_complete():
        earliest = int(pending.first["version"]) if pending.first else pending.pin + 1
        return f"commits after version {pending.offset} were removed by log cleanup", earliest
    switched_off = [row for row in pending.commits if _turns_change_data_feed_off(row)]
    if switched_off or not change_data_feed_now:
        return "Change Data Feed was turned off after its offset", _after_last_enable(pending)
    cutoff = datetime.now() - retention.deleted_files
    first = pending.commits[0]
    if first["timestamp"] < cutoff:
        readable = [int(row["version"]) for row in pending.commits if row["timestamp"] >= cutoff]
        return (
            f"its oldest unread change (version {first['version']}, committed "
            f"{first['timestamp']:%Y-%m-%d %H:%M:%S}) is older than the source's "
            f"delta.deletedFileRetentionDuration ({format_interval(retention.deleted_files)})",
            min(readable, default=pending.pin + 1),
        )
    return None


def _properties_set(row: Row) -> dict:
    if row.get("operation") not in ("SET TBLPROPERTIES", "UNSET TBLPROPERTIES"):
        return {}
    return _json_properties(row)


def _json_properties(row: Row) -> dict:
    """The `properties` a commit's operationParameters record (SET TBLPROPERTIES, CREATE)."""
    parameters = row.get("operationParameters") or {}
    try:
        return dict(json.loads(parameters.get("properties") or "{}"))
    except ValueError:
        return {}


def _turns_change_data_feed_off(row: Row) -> bool:
    if row.get("operation") == "UNSET TBLPROPERTIES":
        keys = str((row.get("operationParameters") or {}).get("propertyKeys", ""))
        return CDF_PROPERTY in keys
    value = _properties_set(row).get(CDF_PROPERTY)
    return value is not None and str(value).lower() != "true"


def _after_last_enable(pending: CommitsSinceOffset) -> int:
    enabled = [
        int(row["version"])
        for row in pending.commits
        if str(_properties_set(row).get(CDF_PROPERTY, "")).lower() == "true"
    ]
    return max(enabled) + 1 if enabled else pending.pin + 1


def change_data_feed_on_since(history: list[Row], last: int, on_now: bool) -> int | None:
    """The version from which Change Data Feed has been on without a break up to version
    `last`, from DESCRIBE HISTORY rows; None when it is off at `last`. A version whose commit
    turns it on can be read: its own commit records no data changes.

    Before the log's first event (a CREATE, or a property set or unset) the feed is in the
    state that event left: off before a switch on, on before a switch off; with no event in
    the log, as it is now.
    """
    events = [
        (int(row["version"]), state)
        for row in sorted(history, key=lambda row: int(row["version"]))
        if (state := _change_data_feed_event(row)) is not None
    ]
    oldest = min((int(row["version"]) for row in history), default=0)
    on = (not events[0][1]) if events else on_now
    since: int | None = oldest if on else None
    for version, switched_on in events:
        if version > last:
            break
        if switched_on and since is None:
            since = version
        elif not switched_on:
            since = None
    return since


def _change_data_feed_event(row: Row) -> bool | None:
    """True when the commit turns Change Data Feed on, False off, None when it leaves it."""
    operation = str(row.get("operation") or "")
    if operation.startswith(("CREATE", "REPLACE")):
        properties = _json_properties(row)
        return str(properties.get(CDF_PROPERTY, "false")).lower() == "true"
    if _turns_change_data_feed_off(row):
        return False
    value = _properties_set(row).get(CDF_PROPERTY)
    return None if value is None else str(value).lower() == "true"


def expiry_warning(stream: str, pending: CommitsSinceOffset, retention: Retention) -> str | None:
    """A warning when the stream's pending changes leave retention within 24 hours."""
    deadline = stale_after(pending, retention)
    if deadline is None or deadline - datetime.now() > WARN_WITHIN:
        return None
    return (
        f"Stream {stream} goes stale at {deadline:%Y-%m-%d %H:%M:%S} (its oldest unread change "
        f"leaves {pending.source}'s retention then); build its consumer before that."
    )
