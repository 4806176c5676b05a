"""for_system_time() on a fake table (no JVM): which reading a request gets (a table state
Delta reads directly, or every row version with the form's predicate), the pin it shares with
the build, and where the readable history begins."""

from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.travel.for_system_time import (
    SystemTimeRequest,
    readable_history,
    system_time_sql,
)

NOW = datetime(2026, 11, 25, 12, 0, 0)
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
