"""Whether a source only gained rows since a stream's offset, from the history a build reads.

Then a mirror (`apply_changes`) needs no MERGE: with a key unique in the source, a key added
by an append was not in the source at the offset (two rows would hold it at the pin), so it
is not in a target that mirrors the source at the offset either, and an INSERT of the
stream's rows is exact. The history tells it without reading any data: every commit in the
range is a blind append (Delta's `isBlindAppend`: files added, none removed, nothing read) or
changes no row (table properties, OPTIMIZE). Anything else, or a history with a gap, and the
build MERGEs as usual.
"""

from dbt.adapters.spark_streams.streams.staleness import CommitsSinceOffset

APPENDING_OPERATIONS = ("WRITE", "STREAMING UPDATE")
NO_ROW_CHANGE = ("SET TBLPROPERTIES", "UNSET TBLPROPERTIES", "OPTIMIZE")


def only_appends(history: CommitsSinceOffset) -> bool:
    """Whether every commit after the offset, up to the pin, only appended rows."""
    if not history.commits:
        return history.pin <= history.offset  # nothing pending; else a history not read
    return history.log_is_complete() and all(_appends(commit) for commit in history.commits)


def _appends(commit: dict) -> bool:
    operation = str(commit.get("operation") or "")
    if operation in NO_ROW_CHANGE:
        return True
    return operation in APPENDING_OPERATIONS and commit.get("isBlindAppend") is True
