"""for_system_time()'s reads without a JVM: row values identified in a form Spark can group
(a map's entries sorted), the change feed read by path, the opens and closes each state's
copies take their times from, the readable history up to the pin, and the call named in the
errors of a table that cannot answer.

The generated queries use Spark's lateral views, lambdas and arrays, which sqlglot's executor
does not run: their clauses are checked where a clause is the behaviour."""

from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.retention import Retention
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.travel.for_system_time import (
    ReadableHistory,
    readable_history,
    retention_start,
    row_versions_sql,
    state_versions_sql,
)
from tests.unit.travel.test_for_system_time import (
    NAME,
    NOW,
    START,
    Customers,
    commit,
    source,
    sql_for,
)

T = datetime(2026, 11, 20, 9, 0, 0)
WEEK = Retention(deleted_files=timedelta(days=7), log=timedelta(days=30))
PREFS = SourceTable(
    "`shop`.`prefs`", ("id", "attrs"), True, WEEK,
    column_types=("int", "map<string,int>"), location="s3://bucket/prefs",
)  # fmt: skip
READABLE = ReadableHistory(T, 1, {1: T, 2: T + timedelta(hours=1)}, T)
PIN = SourceVersion(2, T + timedelta(hours=1))
SORTED_MAP = "array_sort(transform(map_entries(_row.`attrs`), "


def test_a_row_with_a_map_is_identified_by_its_sorted_entries() -> None:
    """Spark cannot group by a map: a row value's identity sorts its entries, both where the
    feed's events are counted and where the state's (or the current) rows are."""
    state = state_versions_sql(PREFS, PIN, READABLE, 1)
    assert state.count(f"'attrs', {SORTED_MAP}") == 2
    assert "from _copies left join _times on _copies._id = _times._id" in state
    versions = row_versions_sql(PREFS, PIN, READABLE)
    assert versions.count(f"'attrs', {SORTED_MAP}") == 2


def test_the_feed_is_read_by_the_tables_path() -> None:
    for sql in (
        state_versions_sql(PREFS, PIN, READABLE, 1),
        row_versions_sql(PREFS, PIN, READABLE),
    ):
        assert "from table_changes_by_path('s3://bucket/prefs', 1, 2) where " in sql


def test_a_states_copies_open_newest_first_and_close_oldest_first() -> None:
    sql = state_versions_sql(PREFS, PIN, READABLE, 1)
    opens = (
        "flatten(transform(sort_array(collect_list(if(_n > 0 and _v <= 1, "
        "struct(_v, _ts, _n as _repeats), null)), false), "
        "e -> array_repeat(e._ts, cast(e._repeats as int)))) as _opens"
    )
    closes = (
        "flatten(transform(sort_array(collect_list(if(_n < 0 and _v > 1, "
        "struct(_v, _ts, -_n as _repeats), null)), true), "
        "e -> array_repeat(e._ts, cast(e._repeats as int)))) as _closes"
    )
    assert opens in sql and closes in sql


def test_a_copy_older_than_the_feed_starts_at_the_retention_start() -> None:
    sql = state_versions_sql(PREFS, PIN, READABLE, 1)
    assert (
        "coalesce(try_element_at(_opens, cast(_count - _k as int)), "
        "timestamp'2026-11-20 09:00:00.000000') as _sys_start"
    ) in sql


def test_one_readable_commit_is_still_read() -> None:
    last_only = ReadableHistory(T, 2, READABLE.commits, T)
    sql = row_versions_sql(PREFS, PIN, last_only)
    assert "table_changes_by_path('s3://bucket/prefs', 2, 2)" in sql
    assert "_closes._end as _sys_end" in sql


def test_a_state_committed_at_the_travel_cutoff_is_read_directly() -> None:
    readable = ReadableHistory(START, 1, {1: T, 2: T + timedelta(hours=1)}, T)
    assert readable.state_to_read(T, strictly=False) == 1
    assert readable.state_to_read(T + timedelta(minutes=1), strictly=False) == 1


def test_without_a_switch_in_the_log_the_feed_is_on_as_it_is_now() -> None:
    history = [commit(3, NOW - timedelta(days=2)), commit(4, NOW - timedelta(days=1))]
    readable = retention_start(source(), history, SourceVersion(4, NOW), NOW)
    assert (readable.start, readable.first_version) == (NOW - timedelta(days=2), 3)
    with pytest.raises(StreamError, match="reads its Change Data Feed, which is off"):
        retention_start(source(change_data_feed=False), history, SourceVersion(4, NOW), NOW)


class StrictCustomers(Customers):
    """Customers answering only statements on shop.customers, described as `provider`."""

    def __init__(self, provider: str = "delta", **fields) -> None:
        super().__init__(**fields)
        self.provider = provider

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("show views"):
            return []
        assert NAME in sql, sql
        rows = super().__call__(sql)
        if sql.startswith("describe table extended"):
            rows[-1] = {"col_name": "Provider", "data_type": self.provider}
        return rows


def test_the_readable_history_runs_to_the_pin_inclusive() -> None:
    table = StrictCustomers()
    pins = {NAME: SourceVersion(3, table.when(3))}
    _, pin, readable = readable_history(table, pins, NOW, "shop", "customers", "r")
    assert sorted(readable.commits) == [0, 1, 2, 3]
    _, pin, readable = readable_history(table, {}, NOW, "shop", "customers", "r")
    assert (pin.version, sorted(readable.commits)) == (4, [0, 1, 2, 3, 4])


def test_a_source_that_is_no_delta_table_is_named_with_the_call() -> None:
    with pytest.raises(StreamError) as raised:
        sql_for(StrictCustomers(provider="parquet"), "as_of", NOW)
    assert "for_system_time(shop.customers): source `shop`.`customers` is a parquet table" in (
        raised.value.msg
    )
