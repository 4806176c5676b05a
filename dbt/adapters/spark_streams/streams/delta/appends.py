"""Whether a source only gained, or only lost, rows since a stream's offset, from the history a
build reads.

Only gained: a mirror (`apply_changes`) needs no MERGE. With a key unique in the source, a key
added by an append was not in the source at the offset (two rows would hold it at the pin), so
it is not in a target that mirrors the source at the offset either, and an INSERT of the
stream's rows is exact. Every commit in the range is a blind append (Delta's `isBlindAppend`:
files added, none removed, nothing read) or changes no row (table properties, OPTIMIZE).

Only lost: every commit is a DELETE (or changes no row), so the change set holds only deletes
(Delta's feed reports a DELETE's removed rows and nothing else), and the mirror's MERGE needs
only its delete clause: a MERGE with no insert clause joins the target with an inner join
instead of an outer one.

Anything else, or a history with a gap, and the build MERGEs as usual.
"""

from collections.abc import Callable

from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset

APPENDING_OPERATIONS = ("WRITE", "STREAMING UPDATE")
NO_ROW_CHANGE = ("SET TBLPROPERTIES", "UNSET TBLPROPERTIES", "OPTIMIZE")


def only_appends(history: CommitsSinceOffset) -> bool:
    """Whether every commit after the offset, up to the pin, only appended rows."""
    return _every_commit(history, _appends)


def only_deletes(history: CommitsSinceOffset) -> bool:
    """Whether every commit after the offset, up to the pin, only deleted rows."""
    return _every_commit(history, _deletes)


def _every_commit(history: CommitsSinceOffset, kind: Callable[[dict], bool]) -> bool:
    if not history.commits:
        return history.pin <= history.offset  # nothing pending; else a history not read
    return history.log_is_complete() and all(kind(commit) for commit in history.commits)


def _appends(commit: dict) -> bool:
    operation = _operation(commit)
    if operation in NO_ROW_CHANGE:
        return True
    return operation in APPENDING_OPERATIONS and commit.get("isBlindAppend") is True


def _deletes(commit: dict) -> bool:
    return _operation(commit) in (*NO_ROW_CHANGE, "DELETE")


def _operation(commit: dict) -> str:
    return str(commit.get("operation") or "")
