"""How many change rows the history bounds, and when a build hints a broadcast
(streams/delta/change_size.py, build.plan)."""

from dataclasses import replace

import pytest

from dbt.adapters.spark_streams.streams.builds.build import plan
from dbt.adapters.spark_streams.streams.delta.change_size import add_rows, change_rows
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from tests.unit.builds.test_build import CONFIG, build_for, record


def commit(operation: str, mode: str = "Append", **metrics: int) -> dict:
    return {
        "operation": operation,
        "operationParameters": {"mode": mode},
        "operationMetrics": {name: str(value) for name, value in metrics.items()},
    }


def history(*commits: dict, offset: int = 4) -> CommitsSinceOffset:
    rows = tuple({"version": offset + 1 + i, **c} for i, c in enumerate(commits))
    return CommitsSinceOffset("`s`.`t`", offset, offset + len(rows), rows)


def test_each_operation_counts_its_change_feed_rows() -> None:
    assert (
        change_rows(
            history(
                commit("WRITE", numOutputRows=10),
                commit("UPDATE", numUpdatedRows=3),  # a pre- and a post-image each
                commit("DELETE", numDeletedRows=2),
                commit(
                    "MERGE",
                    numTargetRowsInserted=1,
                    numTargetRowsUpdated=4,
                    numTargetRowsDeleted=5,
                ),
                commit("STREAMING UPDATE", numOutputRows=7),
                commit("OPTIMIZE"),
                commit("SET TBLPROPERTIES"),
            )
        )
        == 10 + 6 + 2 + (1 + 8 + 5) + 7
    )


@pytest.mark.parametrize(
    "unbounded",
    [
        commit("WRITE", mode="Overwrite", numOutputRows=1),  # also deletes every old row
        commit("RESTORE", numRestoredFiles=1),  # an operation the module does not know
        commit("DELETE"),  # a delete of whole files reports no row count
        commit("MERGE", numTargetRowsInserted=1),  # a metric missing
    ],
)
def test_a_commit_its_metrics_cannot_bound_makes_the_size_unknown(unbounded: dict) -> None:
    assert change_rows(history(commit("WRITE", numOutputRows=1), unbounded)) is None


def test_nothing_pending_is_zero_and_a_gap_in_the_history_unknown() -> None:
    assert change_rows(CommitsSinceOffset("`s`.`t`", 4, 4, ())) == 0
    assert change_rows(CommitsSinceOffset("`s`.`t`", 4, 6, ())) is None  # not read
    gap = CommitsSinceOffset(
        "`s`.`t`", 4, 6, ({"version": 6, **commit("WRITE", numOutputRows=1)},)
    )
    assert change_rows(gap) is None


def test_bounds_add_up_and_unknown_wins() -> None:
    assert add_rows(0, 3) == 3
    assert add_rows(None, 3) is None and add_rows(3, None) is None


@pytest.mark.parametrize(
    ("rows", "limit", "hinted"),
    [
        (1_000, 100_000, True),
        (100_000, 100_000, True),
        (100_001, 100_000, False),
        (None, 100_000, False),  # unknown
        (0, 100_000, False),  # nothing to join
        (1_000, 0, False),  # broadcast_change_rows: 0 turns it off
    ],
)
def test_a_build_hints_a_broadcast_when_the_bound_is_under_the_limit(rows, limit, hinted) -> None:
    build = build_for(moves=True, reads={"s": (record("s", 1), "sql")}, change_rows=rows)
    config = replace(CONFIG, broadcast_change_rows=limit)
    assert plan(config, build, True, False).broadcast_changes is hinted


def test_no_hint_without_a_stream_read() -> None:
    assert not plan(CONFIG, build_for(moves=True, change_rows=5), True, False).broadcast_changes
