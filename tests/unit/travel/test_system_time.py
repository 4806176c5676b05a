"""for_system_time()'s decisions without a JVM: the request, the seed's boundary rules, where
the readable history begins, and which table state AS OF / BEFORE read directly."""

from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.retention import Retention
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.travel.for_system_time import (
    ReadableHistory,
    SystemTimeRequest,
    check_times,
    predicate,
    retention_start,
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
