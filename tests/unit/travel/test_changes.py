"""changes() intervals on a fake history: what Delta could no longer read is refused, naming
the earliest start that works; when Change Data Feed was on is read from the history."""

import json
import re
from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.delta.staleness import change_data_feed_on_since
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest
from dbt.adapters.spark_streams.streams.travel.changes import table_changes_sql as changes_sql
from dbt.adapters.spark_streams.streams.travel.for_system_time import SystemTimeRequest
from tests.unit.frozen_clock import freeze_staleness_clock

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


def test_the_macros_options_parsed_once_by_the_request() -> None:
    options = {"at": {"version": 1}, "end": None, "unique_key": "id", "empty": True}
    request = ChangesRequest.from_options("raw", "orders", options)
    assert request == ChangesRequest(
        "raw", "orders", at={"version": 1}, unique_key=("id",), empty=True
    )
    assert request.ends_at_build
    assert not ChangesRequest("raw", "orders", at={"version": 1}, end={"version": 2}).ends_at_build
    assert ChangesRequest("raw", "orders", at={"stream": "s"}, end={"version": 2}).ends_at_build


@pytest.fixture
def _a_day_after_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_staleness_clock(monkeypatch, T + timedelta(days=1))


T = datetime(2026, 11, 20, 9, 0, 0)


class FakeDeltaWithId(FakeDelta):
    """FakeDelta that also answers DESCRIBE DETAIL (the table id)."""

    def __call__(self, sql: str) -> list[dict]:
        if sql.startswith("describe detail"):
            return [{"id": "table-1"}]
        return super().__call__(sql)


def timed(version: int, moment: datetime, operation: str = "WRITE", cdf: str | None = None):
    row = commit(version, 0, operation, cdf)
    return {**row, "timestamp": moment}


HISTORY = [
    timed(0, T, "CREATE TABLE", "true"),
    timed(1, T + timedelta(minutes=1)),
    timed(2, T + timedelta(minutes=2)),
    timed(3, T + timedelta(minutes=3)),
]


def read_range(sql: str) -> tuple[int, int]:
    """The (first, last) versions of the interval's table_changes read."""
    inner = sql.split(f"table_changes('{TABLE}', ", 1)[1].split(")", 1)[0]
    first, last = inner.split(", ")
    return int(first), int(last)


def changes_at(*, run=None, streams=None, **arguments) -> str:
    run = run or FakeDeltaWithId(HISTORY, CDF_ON)
    request = ChangesRequest("raw", "orders", **arguments)
    return changes_sql(run, {}, (streams or {}).get, request)


@pytest.mark.usefixtures("_a_day_after_the_history")
@pytest.mark.parametrize(
    ("arguments", "versions"),
    [
        ({"at": {"version": 1}}, (2, 3)),  # the state including version 1: read from 2
        ({"before": {"version": 1}}, (1, 3)),  # the state just ahead of version 1
        ({"at": {"version": 0}, "end": {"version": 2}}, (1, 2)),  # end is inclusive
        ({"at": {"timestamp": "2026-11-20 09:02:00"}}, (3, 3)),  # committed at t: included
        ({"before": {"timestamp": "2026-11-20 09:02:00"}}, (2, 3)),  # strictly before t
        ({"at": {"timestamp": "2026-11-20 09:01:59.999999"}}, (2, 3)),
        ({"before": {"timestamp": "2026-11-20 09:02:00.000001"}}, (3, 3)),
        ({"at": {"version": 0}, "end": {"timestamp": "2026-11-20 09:01:30"}}, (1, 1)),
    ],
)
def test_points_name_table_states(arguments: dict, versions: tuple[int, int]) -> None:
    assert read_range(changes_at(**arguments)) == versions


@pytest.mark.usefixtures("_a_day_after_the_history")
def test_an_interval_ending_at_its_start_reads_nothing() -> None:
    sql = changes_at(at={"version": 2}, end={"version": 2})
    assert "table_changes" not in sql
    assert "from `raw`.`orders` version as of 2) where false" in sql


def stream(source_table: str = TABLE, source_id: str = "table-1", offset: int = 1):
    return StreamRecord(
        "orders_mirror__orders", "analytics", source_table, source_id, "delta", "standard", (),
        "model.shop.orders_mirror", "`analytics`.`orders_mirror`", offset, T, 7, T, None,
    )  # fmt: skip


@pytest.mark.usefixtures("_a_day_after_the_history")
def test_at_a_stream_reads_from_its_offset() -> None:
    sql = changes_at(at={"stream": "s"}, streams={"s": stream(offset=1)})
    assert read_range(sql) == (2, 3)


@pytest.mark.usefixtures("_a_day_after_the_history")
@pytest.mark.parametrize(
    ("arguments", "streams", "message"),
    [
        (
            {},
            None,
            "give exactly one of at= or before= (at names the table's state including a "
            "point's commit, before the state just ahead of it), e.g. at={'version': 3}.",
        ),
        (
            {"at": {"version": 1}, "before": {"version": 1}},
            None,
            "give exactly one of at= or before=",
        ),
        (
            {"before": {"stream": "s"}},
            None,
            "before= must be a mapping with one of 'version', 'timestamp', like "
            "{'version': 3} or {'timestamp': '2024-01-01 00:00:00'}, not {'stream': 's'}.",
        ),
        (
            {"at": {"version": 1}, "end": {"stream": "s"}},
            None,
            "end= must be a mapping with one of 'version', 'timestamp',",
        ),
        (
            {"at": {"version": 1, "timestamp": "2026-11-20"}},
            None,
            "at= must be a mapping with one of 'version', 'timestamp', 'stream',",
        ),
        (
            {"at": {"stream": "nope"}},
            {},
            "at={'stream': 'nope'} names no stream. Run `dbt run-operation show_streams` "
            "to list the streams.",
        ),
        (
            {"at": {"stream": "s"}},
            {"s": stream(source_table="`raw`.`customers`")},
            "stream s is on `raw`.`customers`, not `raw`.`orders`; name a stream on this table.",
        ),
        (
            {"at": {"stream": "s"}},
            {"s": stream(source_id="table-0")},
            "stream s's offset is a version of an earlier table named `raw`.`orders` (it was "
            "dropped and created again); its offset means nothing for this one. Give a "
            "version or timestamp.",
        ),
        (
            {"at": {"version": 4}},
            None,
            "the start state (version 4) is outside the history of `raw`.`orders`, whose "
            "versions run from 0 to 3.",
        ),
        (
            {"at": {"version": 0}, "end": {"version": 7}},
            None,
            "the end state (version 7) is outside the history",
        ),
        (
            {"at": {"version": 2}, "end": {"version": 1}},
            None,
            "end (version 1) is before the start state (version 2); give an end at or after "
            "the start.",
        ),
        (
            {"at": {"version": 1}, "information": "everything"},
            None,
            "information='everything' is not one of 'default', 'append_only'.",
        ),
    ],
)
def test_refused_requests_name_the_call_and_the_fix(
    arguments: dict, streams: dict | None, message: str
) -> None:
    with pytest.raises(StreamError) as raised:
        changes_at(streams=streams, **arguments)
    assert raised.value.msg.startswith("changes(raw.orders): ")
    assert message in raised.value.msg


@pytest.mark.usefixtures("_a_day_after_the_history")
def test_a_time_before_the_history_names_where_it_begins() -> None:
    with pytest.raises(StreamError) as raised:
        changes_at(at={"timestamp": "2026-11-20 08:59:59"})
    assert raised.value.msg == (
        "Point {'timestamp': '2026-11-20 08:59:59'} on `raw`.`orders`: the table has no state "
        "at 2026-11-20 08:59:59; its history begins with version 0, committed at "
        "2026-11-20 09:00:00. Give a later point."
    )


@pytest.mark.usefixtures("_a_day_after_the_history")
def test_a_start_before_change_data_feed_was_on_names_the_earliest_start() -> None:
    history = [
        timed(0, T, "CREATE TABLE"),
        timed(1, T + timedelta(minutes=1)),
        timed(2, T + timedelta(minutes=2), "SET TBLPROPERTIES", "true"),
        timed(3, T + timedelta(minutes=3)),
    ]
    run = FakeDeltaWithId(history, CDF_ON)
    with pytest.raises(StreamError) as raised:
        changes_at(run=run, at={"version": 0})
    assert raised.value.msg == (
        "changes(raw.orders): the interval starts at version 1, before Change Data Feed was "
        "turned on for `raw`.`orders` (version 2); the earliest start is at={'version': 1}."
    )
    assert read_range(changes_at(run=run, at={"version": 1})) == (2, 3)


@pytest.mark.usefixtures("_a_day_after_the_history")
def test_change_data_feed_off_names_the_statement_that_turns_it_on() -> None:
    history = [timed(0, T, "CREATE TABLE"), timed(1, T + timedelta(minutes=1))]
    run = FakeDeltaWithId(history, {})
    with pytest.raises(StreamError) as raised:
        changes_at(run=run, at={"version": 0})
    assert raised.value.msg == (
        "changes(raw.orders): Change Data Feed is off on `raw`.`orders` at version 1, and "
        "changes() reads it. Turn it on with\n  ALTER TABLE `raw`.`orders` SET TBLPROPERTIES "
        "(delta.enableChangeDataFeed = true)\nChanges made before that are never available."
    )


def empty_changes_sql(run: FakeDelta, request: ChangesRequest) -> str:
    return changes_sql(run, {}, lambda _: None, replace(request, empty=True))


@pytest.mark.usefixtures("_a_day_after_the_history")
def test_empty_reads_the_columns_at_the_newest_version_and_no_rows() -> None:
    request = ChangesRequest("raw", "orders", unique_key=("ID",))
    run = FakeDeltaWithId(HISTORY, CDF_ON)
    sql = empty_changes_sql(run, request)
    assert sql == (
        "select * from (select `id`, 'INSERT' as metadata_action, false as metadata_isupdate, "
        "sha1(to_json(named_struct('id', `id`), map('ignoreNullFields', 'false'))) as "
        "metadata_row_id, cast(3 as bigint) as metadata_commit_version, "
        "timestamp'2026-11-20 09:03:00.000000' as metadata_commit_timestamp from `raw`.`orders` "
        "version as of 3) where false"
    )


@pytest.mark.usefixtures("_a_day_after_the_history")
def test_empty_refuses_what_changes_refuses() -> None:
    run = FakeDeltaWithId(HISTORY, CDF_ON)
    with pytest.raises(StreamError, match="information='all' is not one of"):
        empty_changes_sql(run, ChangesRequest("raw", "orders", information="all"))
    with pytest.raises(StreamError, match=r"unique_key column\(s\) sku not in source"):
        empty_changes_sql(run, ChangesRequest("raw", "orders", unique_key=("sku",)))


@pytest.mark.usefixtures("_a_day_after_the_history")
def test_an_interval_that_ends_before_the_feed_was_on_names_the_earliest_start() -> None:
    history = [
        timed(0, T, "CREATE TABLE"),
        timed(1, T + timedelta(minutes=1)),
        timed(2, T + timedelta(minutes=2)),
        timed(3, T + timedelta(minutes=3), "SET TBLPROPERTIES", "true"),
    ]
    run = FakeDeltaWithId(history, CDF_ON)
    with pytest.raises(StreamError) as raised:
        changes_at(run=run, at={"version": 0}, end={"version": 2})
    assert raised.value.msg == (
        "changes(raw.orders): the interval ends at version 2, while Change Data Feed was off "
        "on `raw`.`orders`; it has been on since version 3, and changes made before that are "
        "never available. The earliest start is at={'version': 2}."
    )
