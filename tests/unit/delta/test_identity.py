"""When the source's history alone shows it is still the table a stream's offset belongs to."""

from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.identity import history_shows_same_table
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset

OFFSET_TIME = datetime(2026, 11, 20, 9, 30, 15, 123000)


def commit(version: int, operation: str, timestamp: datetime) -> dict:
    return {"version": version, "operation": operation, "timestamp": timestamp}


def pending(offset_commit: dict | None, *later: dict) -> CommitsSinceOffset:
    return CommitsSinceOffset(
        source="shop.orders",
        offset=4,
        pin=4 + len(later),
        commits=later,
        offset_time=OFFSET_TIME,
        offset_commit=offset_commit,
    )


LATER = OFFSET_TIME + timedelta(minutes=5)


def test_the_offset_commit_as_recorded_and_plain_writes_since() -> None:
    history = pending(commit(4, "WRITE", OFFSET_TIME), commit(5, "MERGE", LATER))
    assert history_shows_same_table(history)


@pytest.mark.parametrize(
    "history",
    [
        # dropped and recreated: version 4 of the new table is another commit
        pending(commit(4, "WRITE", OFFSET_TIME + timedelta(milliseconds=1))),
        # the offset's commit is no longer in the history (log cleanup, or a shorter new table)
        pending(None, commit(5, "WRITE", LATER)),
        # replaced in place: the history goes on, the table is new
        pending(commit(4, "WRITE", OFFSET_TIME), commit(5, "CREATE OR REPLACE TABLE", LATER)),
        pending(commit(4, "WRITE", OFFSET_TIME), commit(5, "REPLACE TABLE AS SELECT", LATER)),
        pending(commit(4, "WRITE", OFFSET_TIME), commit(5, "CLONE", LATER)),
    ],
    ids=["other-commit", "commit-gone", "create-or-replace", "replace-as-select", "clone"],
)
def test_anything_else_leaves_it_to_the_table_id(history: CommitsSinceOffset) -> None:
    assert not history_shows_same_table(history)
