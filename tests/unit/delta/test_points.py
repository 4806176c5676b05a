"""Points name table states (docs/concepts/contract.md, points): at={'version': n} reads from
n + 1, before from n; a timestamp exactly at a commit is in the state `at` names and not in the
one `before` names."""

from datetime import datetime

import pytest

from dbt.adapters.spark_streams.streams.delta.points import state_version, whole_version
from dbt.adapters.spark_streams.streams.delta.source import SourceTable
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.delta_table import DELTA_TABLE

COMMITS = {
    0: datetime(2026, 11, 23, 9, 0, 0),
    1: datetime(2026, 11, 23, 10, 0, 0),
    2: datetime(2026, 11, 23, 11, 0, 0),
}


def history(sql: str) -> list[dict]:
    assert sql == "describe history `raw`.`orders`"
    return [{"version": v, "timestamp": t} for v, t in sorted(COMMITS.items(), reverse=True)]


@pytest.mark.parametrize(
    ("point", "at", "state"),
    [
        ({"version": 1}, True, 1),
        ({"version": 1}, False, 0),
        ({"version": 0}, False, -1),  # before the table's first commit: every change
        ({"timestamp": "2026-11-23 10:00:00"}, True, 1),  # exactly at version 1's commit
        ({"timestamp": "2026-11-23 10:00:00"}, False, 0),
        ({"timestamp": "2026-11-23 10:30:00"}, True, 1),
        ({"timestamp": "2026-11-23 10:30:00"}, False, 1),
        ({"timestamp": "2026-11-24 00:00:00"}, True, 2),
        ({"timestamp": "2026-11-23 09:00:00"}, True, 0),
    ],
)
def test_state_versions(point: dict, at: bool, state: int) -> None:
    assert state_version(history, "`raw`.`orders`", point, at) == state


def test_a_new_stream_reads_from_the_version_after_its_state() -> None:
    source = SourceTable("`raw`.`orders`", ("id",), True, None)  # type: ignore[arg-type]
    assert DELTA_TABLE.first_version(history, source, {"version": 1}, True) == 2
    assert DELTA_TABLE.first_version(history, source, {"version": 1}, False) == 1


def test_a_time_before_the_history_is_an_error_that_names_the_first_commit() -> None:
    with pytest.raises(StreamError, match="has no state before 2026-11-23 09:00:00; its history"):
        state_version(history, "`raw`.`orders`", {"timestamp": "2026-11-23 09:00:00"}, False)
    with pytest.raises(StreamError, match="begins with version 0, committed at 2026-11-23 09:00"):
        state_version(history, "`raw`.`orders`", {"timestamp": "2026-11-22"}, True)


def test_a_version_point_needs_no_history_read() -> None:
    def no_reads(sql: str) -> list[dict]:
        raise AssertionError(f"a version point read the history: {sql}")

    assert state_version(no_reads, "`raw`.`orders`", {"version": 7}, True) == 7
    assert state_version(no_reads, "`raw`.`orders`", {"version": 7}, False) == 6


@pytest.mark.parametrize("version", [7, "7", " 7 "])
def test_a_version_is_a_whole_number(version: object) -> None:
    assert whole_version(version) == 7


@pytest.mark.parametrize("version", [7.5, True, "7; drop table x", "-1", "", None])
def test_anything_else_is_refused_by_name(version: object) -> None:
    with pytest.raises(ValueError, match="the version must be a whole number, not "):
        whole_version(version)
