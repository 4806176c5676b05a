"""A Delta table as a stream's source kind (no JVM): what it asks the catalog, which read
each mode gets, the warnings of its checks, and a start point it cannot read."""

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.retention import Retention
from dbt.adapters.spark_streams.streams.delta.schema_changes import SchemaReads
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.delta_table import DELTA_TABLE
from dbt.adapters.spark_streams.streams.records.netting import VERSIONS, Snapshot
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from tests.unit.delta.test_source import COLUMNS, Catalog, described
from tests.unit.frozen_clock import freeze_staleness_clock
from tests.unit.offsets.test_registry import record

NAME = "`raw`.`orders`"
SNAPSHOT = Snapshot(NAME, ("id", "amount"), ("id",), 6, "2026-11-25 09:00:00.000000")
DELTA = DELTA_TABLE


class Orders(Catalog):
    """raw.orders: described as in test_source, its history versions 0..6, its id."""

    def __init__(self) -> None:
        super().__init__(described(COLUMNS), {"delta.enableChangeDataFeed": "true"})
        self.asked: list[str] = []

    def __call__(self, sql: str) -> list[dict]:
        self.asked.append(sql)
        if sql.startswith(f"describe history {NAME}"):
            rows = [
                {"version": v, "timestamp": datetime(2026, 11, 25, 9, v), "operation": "WRITE"}
                for v in range(6, -1, -1)
            ]
            return rows[:1] if sql.endswith("limit 1") else rows
        if sql == f"describe detail {NAME}":
            return [{"id": "table-9"}]
        return super().__call__(sql)


def test_the_questions_it_asks_the_catalog() -> None:
    run = Orders()
    source = DELTA.describe(run, CatalogEntry(run, "raw", "orders"), "s")
    assert source.name == NAME and source.change_data_feed
    assert DELTA.identify(run, source).table_id == "table-9"
    assert DELTA.latest(run, source) == SourceVersion(6, datetime(2026, 11, 25, 9, 6))
    offset = record("s", 1, offset=4)
    pending = DELTA.history(run, source, offset, SourceVersion(5, datetime(2026, 11, 25)))
    assert [row["version"] for row in pending.commits] == [5]
    assert DELTA.history(run, source, offset, None).pin == 6


@pytest.mark.parametrize(
    ("mode", "marker"),
    [
        ("append_only", "where _change_type = 'insert'"),
        (VERSIONS, "_occurrence > _unchanged"),
        ("standard", "first_value(named_struct('row', "),
    ],
)
def test_each_mode_reads_its_own_way(mode: str, marker: str) -> None:
    sql = DELTA.changes_sql(mode, SNAPSHOT, 5)
    assert marker in sql and "table_changes('`raw`.`orders`', 5, 6)" in sql


def test_an_empty_range_reads_no_rows() -> None:
    sql = DELTA.changes_sql("standard", SNAPSHOT, 7)
    assert sql == DELTA.empty_sql(SNAPSHOT)
    assert sql.endswith("from `raw`.`orders` version as of 6) where false")
    assert DELTA.initial_rows_sql(SNAPSHOT).endswith("from `raw`.`orders` version as of 6")


def test_a_range_about_to_leave_retention_is_a_warning() -> None:
    source = DELTA.describe(Orders(), CatalogEntry(Orders(), "raw", "orders"), "s")
    offset = record("s", 1, offset=4)
    soon = datetime.now() - source.retention.readable_for + timedelta(hours=2)
    commits = ({"version": 5, "timestamp": soon, "operation": "WRITE"},)
    pending = CommitsSinceOffset(NAME, 4, 5, commits)
    [warning] = DELTA.check_readable(Orders(), SchemaReads(), "s", source, offset, pending, True)
    assert warning.startswith("Stream s goes stale at ")
    later = ({"version": 5, "timestamp": datetime.now(), "operation": "WRITE"},)
    fresh = CommitsSinceOffset(NAME, 4, 5, later)
    assert DELTA.check_readable(Orders(), SchemaReads(), "s", source, offset, fresh, True) == []


def test_a_start_point_it_cannot_read_names_the_forms() -> None:
    source = DELTA.describe(Orders(), CatalogEntry(Orders(), "raw", "orders"), "s")
    with pytest.raises(StreamError) as raised:
        DELTA.first_version(Orders(), source, {"timestamp": "yesterday"}, True)
    assert raised.value.msg.startswith(
        "Stream start {'timestamp': 'yesterday'} on `raw`.`orders`: "
    )
    assert raised.value.msg.endswith(
        ". Give {'version': n} or {'timestamp': 'YYYY-MM-DD HH:MM:SS'}."
    )
    with pytest.raises(StreamError) as raised:
        DELTA.first_version(Orders(), source, {"row": 3}, True)
    assert raised.value.msg == (
        "Point {'row': 3} on `raw`.`orders`: give {'version': n} or {'timestamp': '...'}."
    )
    assert DELTA.first_version(Orders(), source, {"timestamp": "2026-11-25 09:03:30"}, False) == 4


WEEK = Retention(deleted_files=timedelta(days=7), log=timedelta(days=30))


def source(change_data_feed: bool, retention: Retention = WEEK) -> SourceTable:
    return SourceTable(NAME, ("id",), change_data_feed, retention)


def prepare(table: SourceTable, creating=True, consuming=True, auto_enable=True, days=0):
    return DELTA_TABLE.prepare("s", table, creating, consuming, auto_enable, days)


def test_a_consumers_first_build_turns_change_data_feed_on() -> None:
    prepared, writes = prepare(source(False))
    assert prepared == source(True)
    assert writes == [
        (
            f"alter table {NAME} set tblproperties (delta.enableChangeDataFeed = true)",
            f"{NAME}: Change Data Feed turned on",
        )
    ]


@pytest.mark.parametrize(
    ("creating", "consuming", "auto_enable"),
    [(False, True, True), (True, False, True), (True, True, False)],
)
def test_no_other_build_turns_it_on(creating: bool, consuming: bool, auto_enable: bool) -> None:
    with pytest.raises(StreamError) as raised:
        prepare(source(False), creating, consuming, auto_enable)
    assert raised.value.msg == (
        f"Stream s: source {NAME} does not have Change Data Feed on, and streams read changes "
        f"from it. Run:\n  ALTER TABLE {NAME} SET TBLPROPERTIES (delta.enableChangeDataFeed = "
        "true)\nor let a consuming build do it (config auto_enable_change_tracking: true, the "
        "default). Changes made before it is on are never available."
    )


def test_a_source_with_the_feed_on_needs_no_write() -> None:
    assert prepare(source(True)) == (source(True), [])


def test_a_consumer_raises_both_retentions_to_the_extension() -> None:
    prepared, writes = prepare(source(True), days=14)
    assert prepared == source(True)
    [(statement, changes)] = writes
    assert statement == (
        f"alter table {NAME} set tblproperties (delta.deletedFileRetentionDuration = "
        "'interval 14 days')"
    )
    assert changes == (
        f"{NAME}: delta.deletedFileRetentionDuration raised from 7 days to 14 days so "
        "unconsumed streams stay readable (max_data_extension_time)"
    )
    short_log = Retention(deleted_files=timedelta(days=7), log=timedelta(days=2))
    [(statement, changes)] = prepare(source(True, short_log), days=14)[1]
    assert "delta.deletedFileRetentionDuration = 'interval 14 days', " in statement
    assert statement.endswith("delta.logRetentionDuration = 'interval 14 days')")
    assert changes.count("raised from") == 2
    assert "(max_data_extension_time); `raw`.`orders`: delta.logRetentionDuration" in changes


def test_retention_already_long_enough_or_a_peek_writes_nothing() -> None:
    assert prepare(source(True), days=7) == (source(True), [])
    assert prepare(source(True), consuming=False, days=14) == (source(True), [])


def test_turning_the_feed_on_and_extending_retention_are_two_writes() -> None:
    _, writes = prepare(source(False), days=14)
    assert [description.split(": ")[1][:18] for _, description in writes] == [
        "Change Data Feed t",
        "delta.deletedFileR",
    ]


DAY_AFTER = datetime(2026, 11, 26, 9, 0)


def stream_on_orders(offset: int = 4, source_id: str = "table-9", second: int = 0):
    """A stream on raw.orders at `offset`, whose commit time it recorded (`second` later: a
    commit of another table that had the same version)."""
    return replace(
        record("s", 1, offset=offset),
        source_id=source_id,
        offset_timestamp=datetime(2026, 11, 25, 9, offset, second),
    )


class StrictOrders(Orders):
    """Orders answering statements on `raw`.`orders` only, described as `provider`."""

    def __init__(self, provider: str = "delta") -> None:
        super().__init__()
        self.table = described(COLUMNS, provider)

    def __call__(self, sql: str) -> list[dict]:
        if not sql.startswith("show views"):
            assert NAME in sql, sql
        return super().__call__(sql)


def test_the_status_of_a_stream_on_the_same_readable_table(monkeypatch) -> None:
    freeze_staleness_clock(monkeypatch, DAY_AFTER)
    status = DELTA.status(StrictOrders(), None, stream_on_orders())
    assert status == {
        "stale": False,
        "stale_after": datetime(2026, 11, 25, 9, 5) + timedelta(days=7),
        "stale_reason": "",
    }
    recreated = DELTA.status(StrictOrders(), None, stream_on_orders(source_id="table-1", second=1))
    assert (
        recreated["stale_reason"] == "source `raw`.`orders` was dropped and recreated or replaced"
    )


def test_a_source_that_is_no_delta_table_is_named_with_the_stream() -> None:
    run = StrictOrders(provider="parquet")
    with pytest.raises(StreamError) as raised:
        DELTA.describe(run, CatalogEntry(run, "raw", "orders"), "s")
    assert raised.value.msg.startswith("Stream s: source `raw`.`orders` is a parquet table;")


def test_the_pending_history_carries_the_offsets_commit_time() -> None:
    run = Orders()
    source = DELTA.describe(run, CatalogEntry(run, "raw", "orders"), "s")
    offset = stream_on_orders()
    pending = DELTA.history(run, source, offset, None)
    assert pending.offset_time == datetime(2026, 11, 25, 9, 4)


def test_a_recreated_table_is_stale_for_the_stream() -> None:
    run = Orders()
    source = DELTA.describe(run, CatalogEntry(run, "raw", "orders"), "s")
    offset = stream_on_orders(source_id="table-1", second=1)
    pending = DELTA.history(run, source, offset, None)
    with pytest.raises(StreamError) as raised:
        DELTA.check_same(run, "s", offset, source, pending)
    assert raised.value.msg.startswith(
        "Stream s is stale: its source `raw`.`orders` was dropped and "
    )
    assert DELTA.check_same(run, "s", stream_on_orders(), source, pending).table_id == "table-9"


def test_a_range_past_retention_is_stale_for_the_stream(monkeypatch) -> None:
    freeze_staleness_clock(monkeypatch, DAY_AFTER + timedelta(days=30))
    run = Orders()
    source = DELTA.describe(run, CatalogEntry(run, "raw", "orders"), "s")
    offset = stream_on_orders()
    pending = DELTA.history(run, source, offset, None)
    with pytest.raises(StreamError) as raised:
        DELTA.check_readable(run, SchemaReads(), "s", source, offset, pending, True)
    assert raised.value.msg.startswith("Stream s is stale")


class RenamedOrders(Orders):
    """Orders whose version 6 renamed a column (or did `operation`): Delta plans the read
    across it as incompatible."""

    def __init__(self, operation: str = "RENAME COLUMN") -> None:
        super().__init__()
        self.operation = operation

    def __call__(self, sql: str) -> list[dict]:
        rows = super().__call__(sql) if not sql.startswith("explain") else []
        if sql.startswith(f"describe history {NAME}"):
            rows = [{**row, "operation": self.operation} if row["version"] == 6 else row
                    for row in rows]  # fmt: skip
        if sql.startswith("explain"):
            return [{"plan": "DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE"}]
        return rows


def test_a_rename_in_the_pending_range_is_read_across_only_by_the_consumer(monkeypatch) -> None:
    freeze_staleness_clock(monkeypatch, DAY_AFTER)
    run = RenamedOrders()
    source = DELTA.describe(run, CatalogEntry(run, "raw", "orders"), "s")
    offset = stream_on_orders()
    pending = DELTA.history(run, source, offset, None)
    reads = SchemaReads()
    assert DELTA.check_readable(run, reads, "s", source, offset, pending, True) == []
    assert [read.stream for read in reads.reads] == ["s"]
    with pytest.raises(StreamError) as raised:
        DELTA.check_readable(run, SchemaReads(), "s", source, offset, pending, False)
    assert raised.value.msg.startswith("Stream s: its pending changes (versions 5 to 6 of ")
    assert raised.value.msg.endswith("Build the consumer first: dbt run -s s")


def check_start(run: RenamedOrders, versions: tuple[int, int], consuming: bool, reads=None):
    source = DELTA.describe(run, CatalogEntry(run, "raw", "orders"), "s")
    reads = SchemaReads() if reads is None else reads
    DELTA.check_start(run, reads, "s", source, versions, "model.shop.m", consuming)
    return reads


def test_a_new_streams_first_read_across_a_rename_is_the_consumers_only() -> None:
    reads = check_start(RenamedOrders(), (5, 6), consuming=True)
    [read] = reads.reads
    assert (read.stream, read.start, read.end, read.started) == ("s", 5, 6, True)
    assert check_start(RenamedOrders(), (5, 5), consuming=False).reads[0].check_off is None
    with pytest.raises(StreamError) as raised:
        check_start(RenamedOrders(), (5, 6), consuming=False)
    assert raised.value.msg.startswith(
        "Stream s: its changes from its start point (versions 5 to 6 of `raw`.`orders`) cross "
        "version 6, which renamed column"
    )
    assert raised.value.msg.endswith("Start it at or after that version, e.g. at={'version': 6}.")


def test_a_replaced_schema_in_a_new_streams_first_read_names_a_later_start() -> None:
    with pytest.raises(StreamError) as raised:
        check_start(RenamedOrders("REPLACE COLUMNS"), (5, 6), consuming=True)
    assert raised.value.msg.startswith("Stream s: version 6 of `raw`.`orders` ")
    assert raised.value.msg.endswith(
        "(versions 5 to 6) across that change. Nothing was read or written. Start the stream "
        "at or after that version, e.g. at={'version': 6}, or without at= / before= (the "
        "source's current rows)."
    )
