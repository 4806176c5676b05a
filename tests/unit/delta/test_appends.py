"""Which histories let a mirror's build INSERT instead of MERGE (streams/delta/appends.py)."""

import pytest

from dbt.adapters.spark_streams.streams.delta.appends import only_appends, only_deletes
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset


def history(*commits: tuple[str, bool], offset: int = 4) -> CommitsSinceOffset:
    rows = tuple(
        {"version": offset + 1 + i, "operation": operation, "isBlindAppend": blind}
        for i, (operation, blind) in enumerate(commits)
    )
    return CommitsSinceOffset("`s`.`t`", offset, offset + len(rows), rows)


@pytest.mark.parametrize(
    "commits",
    [
        (),
        (("WRITE", True),),
        (("WRITE", True), ("OPTIMIZE", False), ("SET TBLPROPERTIES", False)),
        (("STREAMING UPDATE", True), ("WRITE", True)),
    ],
)
def test_appends_and_commits_that_change_no_row(commits):
    assert only_appends(history(*commits))


@pytest.mark.parametrize(
    "commits",
    [
        (("WRITE", False),),  # an overwrite (or an insert that read the table)
        (("WRITE", True), ("UPDATE", False)),
        (("DELETE", False),),
        (("MERGE", False),),  # even a MERGE that only inserted
        (("TRUNCATE", False),),
        (("RESTORE", False),),
        (("CREATE OR REPLACE TABLE AS SELECT", True),),
    ],
)
def test_anything_else_merges(commits):
    assert not only_appends(history(*commits))


def test_versions_pending_but_no_commits_read_merge():
    assert not only_appends(CommitsSinceOffset("`s`.`t`", 4, 6, ()))


def test_a_history_with_a_gap_merges():
    gap = CommitsSinceOffset(
        "`s`.`t`", 4, 7, ({"version": 6, "operation": "WRITE", "isBlindAppend": True},)
    )
    assert not only_appends(gap)


@pytest.mark.parametrize(
    "commits",
    [
        (),
        (("DELETE", False),),
        (("DELETE", False), ("OPTIMIZE", False), ("DELETE", False)),
    ],
)
def test_deletes_and_commits_that_change_no_row(commits):
    assert only_deletes(history(*commits))


@pytest.mark.parametrize(
    "commits",
    [
        (("WRITE", True),),
        (("DELETE", False), ("UPDATE", False)),
        (("MERGE", False),),  # even a MERGE that only deleted
        (("DELETE", False), ("WRITE", True)),
        (("TRUNCATE", False),),
        (("RESTORE", False),),
    ],
)
def test_anything_else_is_not_only_deletes(commits):
    assert not only_deletes(history(*commits))


def test_a_history_with_a_gap_is_not_only_deletes():
    gap = CommitsSinceOffset("`s`.`t`", 4, 7, ({"version": 6, "operation": "DELETE"},))
    assert not only_deletes(gap)
    assert not only_deletes(CommitsSinceOffset("`s`.`t`", 4, 6, ()))
