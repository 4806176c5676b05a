"""changes() points on a fake history (no JVM): which versions an interval reads, at and
before a version, a timestamp or a stream's offset, and every refused request with its text.
The fake catalog and history are those of test_interval.py."""

from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.travel.changes import (
    ChangesRequest,
    changes_sql,
    empty_changes_sql,
)
from tests.unit.frozen_clock import freeze_staleness_clock
from tests.unit.travel.test_interval import CDF_ON, TABLE, FakeDelta, commit


@pytest.fixture(autouse=True)
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


def changes(*, run=None, streams=None, **arguments) -> str:
    run = run or FakeDeltaWithId(HISTORY, CDF_ON)
    request = ChangesRequest("raw", "orders", **arguments)
    return changes_sql(run, {}, (streams or {}).get, request)


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
    assert read_range(changes(**arguments)) == versions


def test_an_interval_ending_at_its_start_reads_nothing() -> None:
    sql = changes(at={"version": 2}, end={"version": 2})
    assert "table_changes" not in sql
    assert "from `raw`.`orders` version as of 2) where false" in sql


def stream(source_table: str = TABLE, source_id: str = "table-1", offset: int = 1):
    return StreamRecord(
        "orders_mirror__orders", "analytics", source_table, source_id, "delta", "standard", (),
        "model.shop.orders_mirror", "`analytics`.`orders_mirror`", offset, T, 7, T, None,
    )  # fmt: skip


def test_at_a_stream_reads_from_its_offset() -> None:
    sql = changes(at={"stream": "s"}, streams={"s": stream(offset=1)})
    assert read_range(sql) == (2, 3)


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
        changes(streams=streams, **arguments)
    assert raised.value.msg.startswith("changes(raw.orders): ")
    assert message in raised.value.msg


def test_a_time_before_the_history_names_where_it_begins() -> None:
    with pytest.raises(StreamError) as raised:
        changes(at={"timestamp": "2026-11-20 08:59:59"})
    assert raised.value.msg == (
        "Point {'timestamp': '2026-11-20 08:59:59'} on `raw`.`orders`: the table has no state "
        "at 2026-11-20 08:59:59; its history begins with version 0, committed at "
        "2026-11-20 09:00:00. Give a later point."
    )


def test_a_start_before_change_data_feed_was_on_names_the_earliest_start() -> None:
    history = [
        timed(0, T, "CREATE TABLE"),
        timed(1, T + timedelta(minutes=1)),
        timed(2, T + timedelta(minutes=2), "SET TBLPROPERTIES", "true"),
        timed(3, T + timedelta(minutes=3)),
    ]
    run = FakeDeltaWithId(history, CDF_ON)
    with pytest.raises(StreamError) as raised:
        changes(run=run, at={"version": 0})
    assert raised.value.msg == (
        "changes(raw.orders): the interval starts at version 1, before Change Data Feed was "
        "turned on for `raw`.`orders` (version 2); the earliest start is at={'version': 1}."
    )
    assert read_range(changes(run=run, at={"version": 1})) == (2, 3)


def test_change_data_feed_off_names_the_statement_that_turns_it_on() -> None:
    history = [timed(0, T, "CREATE TABLE"), timed(1, T + timedelta(minutes=1))]
    run = FakeDeltaWithId(history, {})
    with pytest.raises(StreamError) as raised:
        changes(run=run, at={"version": 0})
    assert raised.value.msg == (
        "changes(raw.orders): Change Data Feed is off on `raw`.`orders` at version 1, and "
        "changes() reads it. Turn it on with\n  ALTER TABLE `raw`.`orders` SET TBLPROPERTIES "
        "(delta.enableChangeDataFeed = true)\nChanges made before that are never available."
    )


def test_empty_reads_the_columns_at_the_newest_version_and_no_rows() -> None:
    request = ChangesRequest("raw", "orders", unique_key=("ID",))
    run = FakeDeltaWithId(HISTORY, CDF_ON)
    sql = empty_changes_sql(run, request)
    assert sql == (
        "select * from (select `id`, 'INSERT' as metadata_action, false as metadata_isupdate, "
        "sha1(to_json(named_struct('id', `id`), map('ignoreNullFields', 'false'))) as "
        "metadata_row_id, 3 as metadata_commit_version, timestamp'2026-11-20 09:03:00.000000' "
        "as metadata_commit_timestamp from `raw`.`orders` version as of 3) where false"
    )


def test_empty_refuses_what_changes_refuses() -> None:
    run = FakeDeltaWithId(HISTORY, CDF_ON)
    with pytest.raises(StreamError, match="information='all' is not one of"):
        empty_changes_sql(run, ChangesRequest("raw", "orders", information="all"))
    with pytest.raises(StreamError, match=r"unique_key column\(s\) sku not in source"):
        empty_changes_sql(run, ChangesRequest("raw", "orders", unique_key=("sku",)))


def test_an_interval_that_ends_before_the_feed_was_on_names_the_earliest_start() -> None:
    history = [
        timed(0, T, "CREATE TABLE"),
        timed(1, T + timedelta(minutes=1)),
        timed(2, T + timedelta(minutes=2)),
        timed(3, T + timedelta(minutes=3), "SET TBLPROPERTIES", "true"),
    ]
    run = FakeDeltaWithId(history, CDF_ON)
    with pytest.raises(StreamError) as raised:
        changes(run=run, at={"version": 0}, end={"version": 2})
    assert raised.value.msg == (
        "changes(raw.orders): the interval ends at version 2, while Change Data Feed was off "
        "on `raw`.`orders`; it has been on since version 3, and changes made before that are "
        "never available. The earliest start is at={'version': 2}."
    )
