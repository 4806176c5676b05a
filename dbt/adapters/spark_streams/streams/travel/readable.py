"""Whether Delta can still read the changes of a `changes()` interval: Change Data Feed on
through it, and its commits' files not yet cleaned up."""

from dbt.adapters.spark_streams.streams.delta.source import SourceTable, enable_command
from dbt.adapters.spark_streams.streams.delta.staleness import (
    CommitsSinceOffset,
    change_data_feed_on_since,
    stale_reason,
)
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row


def check_interval_readable(
    label: str, source: SourceTable, history: list[Row], versions: tuple[int, int]
) -> None:
    """Fail when Delta cannot read the changes of versions first..last (`label` names the
    call): Change Data Feed off for part of them, log cleanup, or data files older than the
    retention."""
    first, last = versions
    if first > last:
        return
    since = _feed_on_since(label, source, history, last)
    if first < since:
        raise StreamError(
            f"{label}: the interval starts at version {first}, before Change "
            f"Data Feed was turned on for {source.name} (version {since}); the earliest start "
            f"is at={{'version': {since - 1}}}."
        )
    pending = CommitsSinceOffset(
        source.name,
        first - 1,
        last,
        tuple(
            sorted(
                (r for r in history if first <= int(r["version"]) <= last),
                key=lambda row: int(row["version"]),
            )
        ),
    )
    reason = stale_reason(pending, source.retention, True)
    if reason is not None:
        why, earliest = reason
        raise StreamError(
            f"{label}: Delta can no longer read the changes from version "
            f"{first}: {why}. The earliest start is at={{'version': {earliest - 1}}}."
        )


def _feed_on_since(label: str, source: SourceTable, history: list[Row], last: int) -> int:
    """The version from which Change Data Feed has been on through the interval's end; an
    error naming the fix when it was off there (on since a later version, or off now)."""
    since = change_data_feed_on_since(history, last, source.change_data_feed)
    if since is not None:
        return since
    newest = max((int(row["version"]) for row in history), default=last)
    on_at_pin = change_data_feed_on_since(history, newest, source.change_data_feed)
    if on_at_pin is not None:
        raise StreamError(
            f"{label}: the interval ends at version {last}, while Change Data "
            f"Feed was off on {source.name}; it has been on since version {on_at_pin}, and "
            f"changes made before that are never available. The earliest start is "
            f"at={{'version': {on_at_pin - 1}}}."
        )
    raise StreamError(
        f"{label}: Change Data Feed is off on {source.name} at version "
        f"{last}, and changes() reads it. Turn it on with\n  "
        f"{enable_command(source.name)}\nChanges made before that are never available."
    )
