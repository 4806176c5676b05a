"""The pending commits of a stream as a build reads them (the newest commit, then exactly the
commits back to the offset), and the Change Data Feed switches that make a range unreadable."""

from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.retention import Retention
from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.delta.staleness import (
    CommitsSinceOffset,
    change_data_feed_on_since,
    check_readable,
    commits_since_offset,
    stale_reason,
)
from dbt.adapters.spark_streams.streams.errors import StreamError

NOW = datetime.now()
WEEK = Retention(deleted_files=timedelta(weeks=1), log=timedelta(days=30))


def commit(version: int, operation: str = "WRITE", **parameters: str) -> dict:
    return {
        "version": version,
        "timestamp": NOW - timedelta(minutes=100 - version),
        "operation": operation,
        "operationParameters": parameters,
    }


class FakeHistory:
    """DESCRIBE HISTORY [LIMIT n] of a table with versions 0..newest, newest first."""

    def __init__(self, newest: int) -> None:
        self.rows = [commit(version) for version in range(newest, -1, -1)]
        self.statements: list[str] = []

    def __call__(self, sql: str) -> list[dict]:
        self.statements.append(sql)
        prefix = "describe history `s`.`t`"
        assert sql.startswith(prefix), sql
        limit = sql.removeprefix(prefix).removeprefix(" limit ")
        return self.rows[: int(limit)] if limit else self.rows


def versions(pending: CommitsSinceOffset) -> list[int]:
    return [int(row["version"]) for row in pending.commits]


def test_nothing_pending_reads_the_newest_commit_alone() -> None:
    """The newest commit is the offset's own: one commit read, the cheapest build."""
    run = FakeHistory(newest=40)
    pending = commits_since_offset(run, "`s`.`t`", offset=40)
    assert run.statements == ["describe history `s`.`t` limit 1"]
    assert versions(pending) == []
    assert pending.offset_commit == run.rows[0]
    assert pending.latest == SourceVersion(40, run.rows[0]["timestamp"])


def test_a_pending_range_is_read_exactly_back_to_the_offsets_commit() -> None:
    run = FakeHistory(newest=40)
    pending = commits_since_offset(run, "`s`.`t`", offset=30)
    assert run.statements == [
        "describe history `s`.`t` limit 1",
        "describe history `s`.`t` limit 11",
    ]
    assert versions(pending) == list(range(31, 41))
    assert (pending.offset, pending.pin) == (30, 40)
    assert pending.latest == SourceVersion(40, run.rows[0]["timestamp"])
    assert pending.offset_commit == run.rows[10]
    assert pending.log_is_complete()
    assert stale_reason(pending, WEEK, True) is None
    one = FakeHistory(newest=40)  # one commit behind: the newest two
    assert versions(commits_since_offset(one, "`s`.`t`", offset=39)) == [40]
    assert one.statements[-1] == "describe history `s`.`t` limit 2"


def test_a_commit_landing_between_the_reads_widens_the_second() -> None:
    """The second read was sized from the newest version of the first; a commit in between
    leaves it one short of the offset's commit, and a third read, wider, reaches it."""
    run = FakeHistory(newest=40)
    first = run.__call__

    def landing(sql: str) -> list[dict]:
        rows = first(sql)
        if len(run.statements) == 1:
            run.rows.insert(0, commit(41))
        return rows

    pending = commits_since_offset(landing, "`s`.`t`", offset=35)
    assert run.statements[1:] == [
        "describe history `s`.`t` limit 6",
        "describe history `s`.`t` limit 7",
    ]
    assert versions(pending) == list(range(36, 42))
    assert pending.offset_commit is not None and pending.offset_commit["version"] == 35


def test_a_history_cleaned_past_the_offset_is_all_there_is() -> None:
    """Log cleanup removed the offset's commit: the read stops at the oldest kept, and the
    range is incomplete (stale)."""
    run = FakeHistory(newest=12)
    run.rows = run.rows[:5]  # versions 12..8 kept
    pending = commits_since_offset(run, "`s`.`t`", offset=3)
    assert run.statements == [
        "describe history `s`.`t` limit 1",
        "describe history `s`.`t` limit 10",
    ]
    assert versions(pending) == [8, 9, 10, 11, 12]
    assert pending.offset_commit is None
    assert not pending.log_is_complete()


def test_the_pin_bounds_the_range() -> None:
    pending = commits_since_offset(FakeHistory(newest=12), "`s`.`t`", offset=5, pin=9)
    assert versions(pending) == [6, 7, 8, 9]
    assert pending.pin == 9
    assert pending.latest is not None and pending.latest.version == 12


def pending_with(*changes: dict) -> CommitsSinceOffset:
    return CommitsSinceOffset("`s`.`t`", 4, 4 + len(changes), tuple(changes))


CDF = "delta.enableChangeDataFeed"


@pytest.mark.parametrize(
    ("switch", "stale"),
    [
        (commit(5, "UNSET TBLPROPERTIES", propertyKeys=f'["{CDF}"]'), True),
        (commit(5, "UNSET TBLPROPERTIES", propertyKeys='["delta.appendOnly"]'), False),
        (commit(5, "SET TBLPROPERTIES", properties=f'{{"{CDF}":"FALSE"}}'), True),
        (commit(5, "SET TBLPROPERTIES", properties=f'{{"{CDF}":"True"}}'), False),
        (commit(5, "SET TBLPROPERTIES", properties='{"delta.appendOnly":"false"}'), False),
        (commit(5, "SET TBLPROPERTIES", properties="not json"), False),
        (commit(5, "WRITE", properties=f'{{"{CDF}":"false"}}'), False),
    ],
)
def test_which_commits_turn_change_data_feed_off(switch: dict, stale: bool) -> None:
    reason = stale_reason(pending_with(switch, commit(6)), WEEK, change_data_feed_now=True)
    assert (reason is not None) == stale
    if stale:
        assert reason == ("Change Data Feed was turned off after its offset", 7)


def test_after_a_switch_off_and_on_the_earliest_readable_version_follows_the_last_on() -> None:
    off = commit(5, "SET TBLPROPERTIES", properties=f'{{"{CDF}":"false"}}')
    on = commit(6, "SET TBLPROPERTIES", properties=f'{{"{CDF}":"true"}}')
    again_on = commit(8, "SET TBLPROPERTIES", properties=f'{{"{CDF}":"true"}}')
    reason = stale_reason(pending_with(off, on, commit(7), again_on, commit(9)), WEEK, True)
    assert reason == ("Change Data Feed was turned off after its offset", 9)


def at(version: int, when: datetime, operation: str = "WRITE", **parameters: str) -> dict:
    return {**commit(version, operation, **parameters), "timestamp": when}


def test_the_retention_boundary_is_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit exactly as old as the retention is still readable; one microsecond older is
    not (Delta keeps the files of commits within the retention, its boundary included)."""
    frozen = datetime(2026, 11, 25, 12, 0, 0)

    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[override]
            return frozen

    monkeypatch.setattr("dbt.adapters.spark_streams.streams.delta.staleness.datetime", Clock)
    cutoff = frozen - WEEK.deleted_files
    edge = CommitsSinceOffset("`s`.`t`", 4, 6, (at(5, cutoff), at(6, cutoff)))
    assert stale_reason(edge, WEEK, True) is None
    older = CommitsSinceOffset(
        "`s`.`t`", 4, 6, (at(5, cutoff - timedelta(microseconds=1)), at(6, cutoff))
    )
    reason = stale_reason(older, WEEK, True)
    assert reason is not None and reason[1] == 6
    gone = CommitsSinceOffset("`s`.`t`", 4, 6, (at(5, cutoff - timedelta(days=1)),
                                                at(6, cutoff - timedelta(days=1))))  # fmt: skip
    reason = stale_reason(gone, WEEK, True)
    assert reason is not None and reason[1] == 7  # nothing readable: after the pin


def test_a_log_cleaned_of_every_pending_commit_starts_after_the_pin() -> None:
    cleaned = CommitsSinceOffset("`s`.`t`", 4, 6, ())
    assert stale_reason(cleaned, WEEK, True) == (
        "commits after version 4 were removed by log cleanup",
        7,
    )


def test_the_stale_error_without_an_offset_time() -> None:
    cleaned = CommitsSinceOffset("`s`.`t`", 4, 6, ())
    with pytest.raises(StreamError) as raised:
        check_readable("s1", cleaned, WEEK, True)
    assert raised.value.msg == (
        "Stream s1 is stale: commits after version 4 were removed by log cleanup. Its offset "
        "is version 4 of `s`.`t`; the earliest version Delta can still read changes from is "
        "7. Rebuild the consumer with --full-refresh to recreate the stream (it starts again "
        "from the current rows); consume streams more often than the source's retention, or "
        "raise delta.deletedFileRetentionDuration, to avoid this."
    )


CDF_ON = f'{{"{CDF}":"true"}}'
CDF_OFF = f'{{"{CDF}":"false"}}'


@pytest.mark.parametrize(
    ("history", "last", "on_now", "since"),
    [
        ([], 9, True, 0),  # no history read: on since the start, as it is now
        ([commit(3), commit(4)], 9, False, None),
        # the first event turns it off: it was on before, from the oldest commit in the log
        ([commit(3), commit(4, "SET TBLPROPERTIES", properties=CDF_OFF)], 9, False, None),
        ([commit(3), commit(4, "SET TBLPROPERTIES", properties=CDF_OFF)], 3, False, 3),
        # an event at `last` counts; one after it does not
        ([commit(3), commit(5, "SET TBLPROPERTIES", properties=CDF_ON)], 5, True, 5),
        ([commit(3), commit(5, "SET TBLPROPERTIES", properties=CDF_ON)], 4, True, None),
        # REPLACE TABLE sets the feed as CREATE does
        ([commit(2, "CREATE TABLE"), commit(6, "REPLACE TABLE", properties=CDF_ON)], 9, True, 6),
        (
            [
                commit(2, "CREATE TABLE", properties=CDF_ON),
                commit(4, "UNSET TBLPROPERTIES", propertyKeys=f'["{CDF}"]'),
                commit(6, "SET TBLPROPERTIES", properties=CDF_ON),
            ],
            9,
            True,
            6,
        ),
    ],
)
def test_change_data_feed_on_since_at_its_edges(history, last, on_now, since) -> None:
    assert change_data_feed_on_since(history, last, on_now) == since
