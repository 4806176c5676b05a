"""changes() intervals on a fake history: what Delta could no longer read is refused, naming
the earliest start that works; when Change Data Feed was on is read from the history."""

import json
import re
from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.delta.staleness import change_data_feed_on_since
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest, changes_sql
from dbt.adapters.spark_streams.streams.travel.for_system_time import SystemTimeRequest

NOW = datetime.now()
TABLE = "`raw`.`orders`"


def commit(version: int, age_days: float, operation: str = "WRITE", cdf: str | None = None):
    parameters = {"properties": json.dumps({"delta.enableChangeDataFeed": cdf})} if cdf else {}
    return {
        "version": version,
        "timestamp": NOW - timedelta(days=age_days),
        "operation": operation,
        "operationParameters": parameters,
    }


class FakeDelta:
    """DESCRIBE TABLE EXTENDED, SHOW TBLPROPERTIES and DESCRIBE HISTORY of one table."""

    def __init__(self, history: list[dict], properties: dict[str, str]) -> None:
        self.history = sorted(history, key=lambda row: -row["version"])
        self.properties = properties

    def __call__(self, sql: str) -> list[dict]:
        if sql.startswith("describe table extended"):
            return [
                {"col_name": "id", "data_type": "int"},
                {"col_name": "# Detailed Table Information", "data_type": ""},
                {"col_name": "Provider", "data_type": "delta"},
            ]
        if sql.startswith("show tblproperties"):
            return [{"key": k, "value": v} for k, v in self.properties.items()]
        if sql.startswith("describe history"):
            return self.history[:1] if sql.endswith("limit 1") else self.history
        raise AssertionError(sql)


def changes(run: FakeDelta, **points) -> str:
    request = ChangesRequest("raw", "orders", **points)
    return changes_sql(run, {}, lambda _: None, request)


CDF_ON = {"delta.enableChangeDataFeed": "true"}


def test_an_interval_older_than_the_deleted_file_retention_names_the_earliest_start():
    history = [commit(0, 30, "CREATE TABLE", "true"), commit(1, 10), commit(2, 1)]
    run = FakeDelta(history, {**CDF_ON, "delta.deletedFileRetentionDuration": "interval 7 days"})
    with pytest.raises(StreamError, match=r"earliest start is at=\{'version': 1\}"):
        changes(run, at={"version": 0})
    assert "table_changes('`raw`.`orders`', 2, 2)" in changes(run, at={"version": 1})


def test_an_interval_whose_log_was_cleaned_up_is_refused():
    run = FakeDelta([commit(5, 2), commit(6, 1)], CDF_ON)
    with pytest.raises(StreamError, match=r"outside the history .* run from 5 to 6"):
        changes(run, at={"version": 2})
    assert "table_changes('`raw`.`orders`', 5, 6)" in changes(run, at={"version": 4})
    with pytest.raises(StreamError, match=r"start state \(version 3\) is outside the history"):
        changes(run, before={"version": 4})  # the state before 4 is 3: cleaned up
    with pytest.raises(StreamError, match=r"end state \(version 7\) is outside the history"):
        changes(run, at={"version": 4}, end={"version": 7})


def test_the_default_end_is_the_pin_shared_with_the_build():
    run = FakeDelta([commit(0, 2, "CREATE TABLE", "true"), commit(1, 1), commit(2, 0)], CDF_ON)
    pins = {TABLE: SourceVersion(1, NOW)}
    sql = changes_sql(
        run, pins, lambda _: None, ChangesRequest("raw", "orders", at={"version": 0})
    )
    assert "table_changes('`raw`.`orders`', 1, 1)" in sql


@pytest.mark.parametrize(
    ("history", "on_now", "since"),
    [
        ([commit(0, 3, "CREATE TABLE", "true"), commit(1, 2)], True, 0),
        (
            [
                commit(0, 3, "CREATE TABLE"),
                commit(1, 2),
                commit(2, 1, "SET TBLPROPERTIES", "true"),
            ],
            True,
            2,
        ),
        (
            [commit(0, 3, "CREATE TABLE", "true"), commit(1, 2, "SET TBLPROPERTIES", "false")],
            False,
            None,
        ),
        ([commit(4, 3), commit(5, 2)], True, 4),  # no event left in the log: as it is now
        # switched on twice: the second changes nothing
        (
            [commit(0, 3, "CREATE TABLE", "true"), commit(1, 2, "SET TBLPROPERTIES", "true")],
            True,
            0,
        ),
    ],
)
def test_change_data_feed_on_since(history, on_now, since):
    assert change_data_feed_on_since(history, 9, on_now) == since


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({}, "give exactly one of as_of, before, from_to, between"),
        ({"as_of": "2026-01-01", "before": "2026-01-01"}, "give exactly one of"),
        ({"between": ("2026-01-01",)}, "between= takes two times, (t1, t2)"),
    ],
)
def test_for_system_time_takes_exactly_one_form(options, error):
    with pytest.raises(StreamError, match=re.escape(error)):
        SystemTimeRequest.from_options("raw", "orders", options)
    assert SystemTimeRequest.from_options("raw", "orders", {"as_of": "t"}).times == ("t",)
