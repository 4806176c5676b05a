"""for_system_time()'s decisions without a JVM: the request, the seed's boundary rules, where
the readable history begins, and which table state AS OF / BEFORE read directly."""

from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.retention import Retention
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.travel.for_system_time import (
    ReadableHistory,
    SystemTimeRequest,
    check_times,
    predicate,
    readable_history,
    retention_start,
    system_time_sql,
)

NOW = datetime(2026, 11, 25, 12, 0, 0)
START = datetime(2026, 11, 20, 9, 0, 0)
CDF_ON = '{"delta.enableChangeDataFeed":"true"}'


def request(form: str, *times: str) -> SystemTimeRequest:
    return SystemTimeRequest("shop", "customers", form, times)


@pytest.mark.parametrize(
    ("options", "form", "times"),
    [
        ({"as_of": "2026-11-21 10:00:00"}, "as_of", ("2026-11-21 10:00:00",)),
        ({"before": "2026-11-21"}, "before", ("2026-11-21",)),
        ({"from_to": ["2026-11-21", "2026-11-22"]}, "from_to", ("2026-11-21", "2026-11-22")),
        ({"between": ("2026-11-21", "2026-11-22"), "as_of": None}, "between",
         ("2026-11-21", "2026-11-22")),
    ],
)  # fmt: skip
def test_a_request_takes_one_form_with_its_times(options: dict, form: str, times: tuple) -> None:
    made = SystemTimeRequest.from_options("shop", "customers", options)
    assert (made.form, made.times) == (form, times)
    assert made.label == "for_system_time(shop.customers)"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "give exactly one of as_of, before, from_to, between"),
        ({"as_of": "2026-11-21", "before": "2026-11-21"}, "give exactly one of"),
        ({"from_to": ["2026-11-21"]}, "from_to= takes two times, (t1, t2)"),
        ({"between": ["a", "b", "c"]}, "between= takes two times"),
    ],
)
def test_a_request_without_exactly_one_form_is_refused(options: dict, message: str) -> None:
    with pytest.raises(StreamError) as raised:
        SystemTimeRequest.from_options("shop", "customers", options)
    assert raised.value.msg.startswith("for_system_time(shop.customers): ")
    assert message in raised.value.msg


T1 = datetime(2026, 11, 21, 10, 0, 0)
T2 = datetime(2026, 11, 22, 10, 0, 0, 500)
LIT1 = "timestamp'2026-11-21 10:00:00.000000'"
LIT2 = "timestamp'2026-11-22 10:00:00.000500'"


def test_the_seeds_boundary_rules() -> None:
    """AS OF includes a version starting at t and excludes one ending at t; BEFORE excludes
    one starting at t and includes one ending at t (the seed's deliberate choice)."""
    assert predicate("as_of", (T1,)) == (
        f"_sys_start <= {LIT1} and (_sys_end is null or _sys_end > {LIT1})"
    )
    assert predicate("before", (T1,)) == (
        f"_sys_start < {LIT1} and (_sys_end is null or _sys_end >= {LIT1})"
    )
    assert predicate("from_to", (T1, T2)) == (
        f"_sys_start < {LIT2} and (_sys_end is null or _sys_end > {LIT1})"
    )
    assert predicate("between", (T1, T2)) == (
        f"_sys_start <= {LIT2} and (_sys_end is null or _sys_end > {LIT1})"
    )


def test_an_empty_period_holds_no_rows() -> None:
    assert predicate("from_to", (T1, T1)) == "false"
    assert predicate("from_to", (T2, T1)) == "false"
    assert predicate("between", (T2, T1)) == "false"
    assert predicate("between", (T1, T1)) != "false"  # BETWEEN t AND t is the instant t


@pytest.mark.parametrize(
    ("form", "times"),
    [
        ("as_of", ("2026-11-20 09:00:00",)),
        ("between", ("2026-11-20 09:00:00", "2026-11-20 09:00:00")),
        ("from_to", ("2026-11-20 09:00:00", "2026-11-20 09:00:00.000001")),
        ("before", ("2026-11-20 09:00:00.000001",)),
    ],
)
def test_times_at_the_retention_start_as_each_form_allows(form: str, times: tuple) -> None:
    parsed = check_times(request(form, *times), START)
    assert parsed == tuple(datetime.fromisoformat(text) for text in times)


@pytest.mark.parametrize(
    ("form", "times", "bad", "relation"),
    [
        ("as_of", ("2026-11-20 08:59:59.999999",), "2026-11-20 08:59:59.999999", "at or after"),
        ("before", ("2026-11-20 09:00:00",), "2026-11-20 09:00:00.000000", "after"),
        ("from_to", ("2026-11-20 09:00:00", "2026-11-20 09:00:00"), "2026-11-20 09:00:00.000000",
         "after"),
        ("between", ("2026-11-19", "2026-11-21"), "2026-11-19 00:00:00.000000", "at or after"),
    ],
)  # fmt: skip
def test_times_before_the_retention_start_name_it(
    form: str, times: tuple, bad: str, relation: str
) -> None:
    with pytest.raises(StreamError) as raised:
        check_times(request(form, *times), START)
    assert raised.value.msg == (
        f"for_system_time(shop.customers): {bad} is before the retention start "
        "2026-11-20 09:00:00.000000, the earliest time the table's history can answer "
        f"({relation} it). Use retention_start() for the earliest time."
    )


def test_a_time_that_is_not_one_is_named() -> None:
    with pytest.raises(StreamError) as raised:
        check_times(request("as_of", "yesterday"), START)
    assert raised.value.msg == (
        "for_system_time(shop.customers): 'yesterday' is not a time; give "
        "'YYYY-MM-DD HH:MM:SS[.ffffff]'."
    )


COMMITS = {3: T1, 4: T1 + timedelta(hours=1), 5: T2}


@pytest.mark.parametrize(
    ("moment", "strictly", "version"),
    [
        (T1, False, 3),  # AS OF a commit's own time includes it
        (T1, True, None),  # BEFORE it: no readable state ahead of version 3
        (T1 + timedelta(hours=1), True, 3),
        (T1 + timedelta(hours=1), False, 4),
        (T2 + timedelta(microseconds=1), True, 5),
        (T2 - timedelta(microseconds=1), False, 4),
    ],
)
def test_the_state_as_of_or_before_a_moment(
    moment: datetime, strictly: bool, version: int | None
) -> None:
    readable = ReadableHistory(START, 3, COMMITS, START)
    assert readable.state_to_read(moment, strictly) == version


def test_a_state_is_read_directly_only_where_its_changes_and_files_are_readable() -> None:
    feed_from_4 = ReadableHistory(START, 4, COMMITS, START)
    assert feed_from_4.state_to_read(T1 + timedelta(minutes=1), strictly=False) is None
    assert feed_from_4.state_to_read(T2, strictly=False) == 5
    files_gone = ReadableHistory(START, 3, COMMITS, T1 + timedelta(minutes=1))
    assert files_gone.state_to_read(T1 + timedelta(minutes=1), strictly=False) is None
    assert files_gone.state_to_read(T2, strictly=False) == 5


def source(change_data_feed: bool = True) -> SourceTable:
    week = Retention(deleted_files=timedelta(days=7), log=timedelta(days=30))
    return SourceTable("`shop`.`customers`", ("id", "tier"), change_data_feed, week)


def commit(version: int, when: datetime, operation: str = "WRITE", **parameters: str) -> dict:
    return {
        "version": version,
        "timestamp": when,
        "operation": operation,
        "operationParameters": parameters,
    }


def test_the_history_begins_where_change_data_feed_was_turned_on() -> None:
    history = [
        commit(0, NOW - timedelta(days=3), "CREATE TABLE"),
        commit(1, NOW - timedelta(days=2), "SET TBLPROPERTIES", properties=CDF_ON),
        commit(2, NOW - timedelta(days=1)),
    ]
    readable = retention_start(source(), history, SourceVersion(2, NOW), NOW)
    assert readable.start == NOW - timedelta(days=2)
    assert readable.first_version == 1
    assert readable.commits == {row["version"]: row["timestamp"] for row in history}
    assert readable.travel_cutoff == NOW - timedelta(days=7)


def test_the_history_begins_at_the_retention_when_the_feed_is_older() -> None:
    history = [
        commit(0, NOW - timedelta(days=20), "CREATE TABLE", properties=CDF_ON),
        commit(1, NOW - timedelta(days=8)),
        commit(2, NOW - timedelta(days=6)),
    ]
    readable = retention_start(source(), history, SourceVersion(2, NOW), NOW)
    assert readable.start == NOW - timedelta(days=7)
    assert readable.first_version == 2


def test_no_readable_commit_starts_after_the_pin() -> None:
    history = [commit(0, NOW - timedelta(days=20), "CREATE TABLE", properties=CDF_ON)]
    readable = retention_start(source(), history, SourceVersion(0, NOW), NOW)
    assert readable.first_version == 1


def test_a_table_without_change_data_feed_names_the_fix() -> None:
    history = [commit(0, NOW - timedelta(days=1), "CREATE TABLE")]
    with pytest.raises(StreamError) as raised:
        retention_start(source(change_data_feed=False), history, SourceVersion(0, NOW), NOW)
    assert raised.value.msg == (
        "Time travel on `shop`.`customers` reads its Change Data Feed, which is off. Turn it "
        "on with\n  ALTER TABLE `shop`.`customers` SET TBLPROPERTIES "
        "(delta.enableChangeDataFeed = true)\nThe history starts then."
    )


NAME = "`shop`.`customers`"


class Customers:
    """shop.customers with versions 0..4 a day apart, version 4 an hour ago; Change Data Feed
    on from `cdf_from`; `deleted_days` of deleted-file retention."""

    def __init__(self, cdf_from: int = 0, deleted_days: int = 7, cdf_now: bool = True) -> None:
        self.cdf_from, self.deleted_days, self.cdf_now = cdf_from, deleted_days, cdf_now

    def when(self, version: int) -> datetime:
        return NOW - timedelta(hours=1) - timedelta(days=4 - version)

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("describe table extended"):
            return [
                {"col_name": "id", "data_type": "int"},
                {"col_name": "tier", "data_type": "string"},
                {"col_name": "# Detailed Table Information", "data_type": ""},
                {"col_name": "Provider", "data_type": "delta"},
            ]
        if sql.startswith("show tblproperties"):
            return [
                {"key": "delta.enableChangeDataFeed", "value": str(self.cdf_now).lower()},
                {
                    "key": "delta.deletedFileRetentionDuration",
                    "value": f"interval {self.deleted_days} days",
                },
            ]
        if sql.startswith("describe history"):
            rows = [self.commit(version) for version in range(4, -1, -1)]
            return rows[:1] if sql.endswith("limit 1") else rows
        raise AssertionError(sql)

    def commit(self, version: int) -> Row:
        operation = "CREATE TABLE" if version == 0 else "WRITE"
        parameters = {}
        if version == self.cdf_from:
            operation = operation if version == 0 else "SET TBLPROPERTIES"
            parameters = {"properties": '{"delta.enableChangeDataFeed":"true"}'}
        return {
            "version": version,
            "timestamp": self.when(version),
            "operation": operation,
            "operationParameters": parameters,
        }


def sql_for(table: Customers, form: str, *times: datetime, pins=None) -> str:
    texts = tuple(moment.strftime("%Y-%m-%d %H:%M:%S.%f") for moment in times)
    request = SystemTimeRequest("shop", "customers", form, texts)
    return system_time_sql(table, {} if pins is None else pins, NOW, request)


def test_as_of_a_readable_state_reads_that_state_directly() -> None:
    table = Customers()
    sql = sql_for(table, "as_of", table.when(2))
    assert (
        f"select named_struct('id', `id`, 'tier', `tier`) as _row from {NAME} version as of 2"
        in sql
    )
    assert "table_changes('`shop`.`customers`', 0, 4)" in sql
    assert "if(_n > 0 and _v <= 2, " in sql and "if(_n < 0 and _v > 2, " in sql


def test_before_a_commit_reads_the_state_ahead_of_it() -> None:
    table = Customers()
    assert f"from {NAME} version as of 1)" in sql_for(table, "before", table.when(2))


def test_the_pin_shared_with_the_build_bounds_every_read() -> None:
    table = Customers()
    pins = {NAME: SourceVersion(3, table.when(3))}
    sql = sql_for(table, "as_of", table.when(2), pins=pins)
    assert "table_changes('`shop`.`customers`', 0, 3)" in sql
    assert pins == {NAME: SourceVersion(3, table.when(3))}


def test_a_state_whose_files_are_gone_is_rebuilt_from_row_versions() -> None:
    table = Customers(deleted_days=2)
    moment = NOW - timedelta(days=2)  # at the retention start: version 2 of 3 days ago
    sql = sql_for(table, "as_of", moment)
    assert "version as of 2" not in sql
    assert f"from {NAME} version as of 4" in sql  # the current rows, changes undone
    literal = moment.strftime("%Y-%m-%d %H:%M:%S.%f")
    assert sql.endswith(
        f"where _sys_start <= timestamp'{literal}' and (_sys_end is null or "
        f"_sys_end > timestamp'{literal}')"
    )
    assert "table_changes('`shop`.`customers`', 3, 4)" in sql


def test_a_period_reads_every_row_version() -> None:
    table = Customers()
    sql = sql_for(table, "between", table.when(1), table.when(3))
    assert "_opens" in sql and "_closes" in sql and "_copies" not in sql
    assert sql.startswith("select * from (with _events as (")
    assert "_sys_start <= timestamp'" in sql


def test_with_no_readable_change_every_row_starts_at_the_retention_start() -> None:
    table = Customers(deleted_days=0)  # every commit is older than the retention
    sql = sql_for(table, "as_of", NOW)
    start = NOW.strftime("%Y-%m-%d %H:%M:%S.%f")
    assert sql.startswith(
        f"select * from (select _row.*, timestamp'{start}' as _sys_start, "
        "cast(null as timestamp) as _sys_end from (select named_struct('id', `id`, 'tier', "
        f"`tier`) as _row from {NAME} version as of 4))"
    )


def test_the_readable_history_begins_where_the_feed_was_turned_on() -> None:
    table = Customers(cdf_from=2)
    pins: dict[str, SourceVersion] = {}
    source, pin, readable = readable_history(table, pins, NOW, "shop", "customers", "r")
    assert (source.name, pin.version) == (NAME, 4)
    assert pins == {NAME: pin}
    assert (readable.start, readable.first_version) == (table.when(2), 2)


def test_a_time_before_the_history_names_the_retention_start() -> None:
    table = Customers(cdf_from=2)
    with pytest.raises(StreamError) as raised:
        sql_for(table, "as_of", table.when(1))
    assert "is before the retention start" in raised.value.msg
    assert table.when(2).strftime("%Y-%m-%d %H:%M:%S.%f") in raised.value.msg


def test_a_table_without_the_feed_names_the_fix() -> None:
    with pytest.raises(StreamError, match="reads its Change Data Feed, which is off"):
        sql_for(Customers(cdf_now=False, cdf_from=9), "as_of", NOW)
