"""What show_streams says of a table stream (no JVM): fresh with its deadline, stale with the
reason, for a source that is gone, no longer Delta, recreated, or beyond its retention."""

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.identity import same_source
from dbt.adapters.spark_streams.streams.delta.source import inspect_source
from dbt.adapters.spark_streams.streams.delta.staleness import commits_since_offset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql
from dbt.adapters.spark_streams.streams.status import streams
from dbt.adapters.spark_streams.streams.status.streams import described_stream, drop_stream
from tests.unit.delta.test_source import COLUMNS, described
from tests.unit.files.test_table import described as file_table
from tests.unit.kinds.test_view import NAME, Shop, offsets
from tests.unit.offsets.test_registry import record

NOW = datetime.now()


class Registered:
    """The registry as a stream's status reads it: its runner, and its schema's tables."""

    def __init__(self, run: RunSql) -> None:
        self.run = run

    def ensure_table(self, name: str, columns: str) -> str:
        return f"`shop`.`{name}`"


def stream_status(run: RunSql, stream: StreamRecord) -> dict:
    return streams.stream_status(run, Registered(run), stream)  # type: ignore[arg-type]


class Listed(Registered):
    """A registry whose log holds `records`."""

    def __init__(self, run: RunSql, *records: StreamRecord) -> None:
        super().__init__(run)
        self.records = records

    def all(self) -> list[StreamRecord]:
        return list(self.records)


def test_every_stream_is_listed_with_its_staleness_and_whether_its_owner_left() -> None:
    source = Source()
    mine = replace(offset_at(source, 1), consumer="model.shop.mirror")
    orphan = replace(offset_at(source, 3), name="orphan", consumer="model.shop.gone")
    listed = streams.stream_statuses(source, Listed(source, mine, orphan), ["model.shop.mirror"])  # type: ignore[arg-type]
    assert [(s["name"], s["owner_gone"], s["stale"]) for s in listed] == [
        ("orders_mirror__orders", False, False),
        ("orphan", True, False),
    ]
    assert listed[0]["stale_after"] == source.when(2) + timedelta(days=7)
    assert listed[1]["stale_after"] is None
    unknown = streams.stream_statuses(source, Listed(source, mine), None)  # type: ignore[arg-type]
    assert unknown[0]["owner_gone"] is True


class Source:
    """`raw`.`orders` with versions 0..3 committed `age` apart, ending `newest_age` ago."""

    def __init__(
        self,
        provider: str | None = "delta",
        exists: bool = True,
        table_id: str = "id-1",
        age: timedelta = timedelta(hours=1),
        properties: dict[str, str] | None = None,
    ) -> None:
        self.provider, self.exists, self.table_id, self.age = provider, exists, table_id, age
        self.properties = properties or {"delta.enableChangeDataFeed": "true"}
        self.statements: list[str] = []

    def __call__(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("describe table extended"):
            if not self.exists:
                raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] `raw`.`orders`")
            return described(COLUMNS, self.provider)
        if sql.startswith("show tblproperties"):
            return [{"key": key, "value": value} for key, value in self.properties.items()]
        if sql.startswith("show views"):
            return []
        if sql.startswith("describe history"):
            return [
                {"version": v, "timestamp": self.when(v), "operation": "WRITE"}
                for v in range(3, -1, -1)
            ]
        if sql.startswith("describe detail"):
            return [{"id": self.table_id}]
        raise AssertionError(sql)

    def when(self, version: int) -> datetime:
        return NOW - self.age * (4 - version)


def offset_at(source: Source, version: int) -> StreamRecord:
    return replace(
        record("orders_mirror__orders", 2, offset=version),
        offset_timestamp=source.when(version),
        source_id="id-1",
    )


def test_a_readable_stream_with_its_deadline() -> None:
    source = Source()
    status = stream_status(source, offset_at(source, 1))
    assert status["stale"] is False and status["stale_reason"] == ""
    assert status["stale_after"] == source.when(2) + timedelta(days=7)
    assert status["name"] == "orders_mirror__orders" and status["offset_version"] == 1
    assert not any(s.startswith("describe detail") for s in source.statements)


def test_a_stream_with_nothing_pending_has_no_deadline() -> None:
    source = Source()
    status = stream_status(source, offset_at(source, 3))
    assert (status["stale"], status["stale_after"]) == (False, None)


def test_a_stream_beyond_its_sources_retention_is_stale() -> None:
    source = Source(age=timedelta(days=3))
    status = stream_status(source, offset_at(source, 0))
    assert status["stale"] is True
    assert status["stale_reason"].startswith("its oldest unread change (version 1, committed ")
    assert status["stale_after"] == source.when(1) + timedelta(days=7)


def test_a_missing_source_is_stale_with_the_error() -> None:
    status = stream_status(Source(exists=False), offset_at(Source(), 1))
    assert status["stale"] is True and status["stale_after"] is None
    assert status["stale_reason"].startswith(
        "Stream orders_mirror__orders: cannot read source `raw`.`orders`"
    )


def test_a_source_that_is_no_longer_delta_is_stale() -> None:
    status = stream_status(Source(provider=None), offset_at(Source(), 1))
    assert status["stale"] is True and status["stale_after"] is None
    assert status["stale_reason"] == "source `raw`.`orders` is no longer a Delta table"


def test_a_recreated_source_is_stale() -> None:
    source = Source(table_id="id-2")
    moved = replace(offset_at(source, 1), offset_timestamp=source.when(1) - timedelta(seconds=1))
    status = stream_status(source, moved)
    assert status["stale"] is True and status["stale_after"] is None
    assert status["stale_reason"] == (
        "source `raw`.`orders` was dropped and recreated or replaced"
    )
    assert any(s.startswith("describe detail") for s in source.statements)


def test_change_data_feed_off_makes_a_stream_stale() -> None:
    source = Source(properties={"delta.enableChangeDataFeed": "false"})
    status = stream_status(source, offset_at(source, 1))
    assert status["stale"] is True
    assert status["stale_reason"] == "Change Data Feed was turned off after its offset"


def view_record(fingerprint: str) -> StreamRecord:
    return replace(
        record("paired_mirror__paired", 2),
        source_table="`shop`.`paired`",
        source_id=fingerprint,
        source_type="view",
    )


def test_a_view_stream_is_fresh_while_its_view_is_unchanged() -> None:
    fingerprint = offsets(1)[NAME].source_id
    status = stream_status(Shop(), view_record(fingerprint))
    assert (status["stale"], status["stale_after"], status["stale_reason"]) == (False, None, "")


def test_a_redefined_or_invalid_view_makes_its_stream_stale() -> None:
    status = stream_status(Shop(), view_record("old"))
    assert status["stale"] is True and status["stale_after"] is None
    assert status["stale_reason"] == "view shop.paired (or a view it reads) was redefined"
    grouped = Shop(view="select id, count(*) as n from orders group by id")
    status = stream_status(grouped, view_record("old"))
    assert status["stale"] is True and status["stale_after"] is None
    assert status["stale_reason"].startswith("Stream paired_mirror__paired: view shop.paired ")
    assert "GROUP BY" in status["stale_reason"]


def files_record() -> StreamRecord:
    return replace(
        record("events_log__events", 2),
        source_table="`landing`.`events`",
        source_id="old-set",
        source_type="files",
    )


def landing(committed_at: str | None = "file:/landing/events", gone: bool = False) -> RunSql:
    """The file table `landing`.`events`, whose committed file set was listed at
    `committed_at` (None: the set is missing)."""

    def run(sql: str) -> list[Row]:
        if sql.startswith("describe table extended"):
            return file_table("parquet")
        if sql.startswith("select min(location) as location, count(*) as parts"):
            return [{"location": committed_at, "parts": 0 if committed_at is None else 1,
                     "recorded_ms": 0}]  # fmt: skip
        if sql.startswith("create or replace temporary view") and gone:
            raise RuntimeError("[PATH_NOT_FOUND] Path does not exist")
        return []

    return run


def test_an_insert_only_stream_is_fresh_while_its_folder_is_read() -> None:
    status = stream_status(landing(), files_record())
    assert (status["stale"], status["stale_after"], status["stale_reason"]) == (False, None, "")


def test_an_insert_only_stream_over_another_folder_or_a_gone_one_is_stale() -> None:
    moved = stream_status(landing("file:/landing/old"), files_record())
    assert moved["stale"] is True and moved["stale_after"] is None
    assert moved["stale_reason"] == (
        "`landing`.`events` now reads file:/landing/events, not file:/landing/old"
    )
    gone = stream_status(landing(gone=True), files_record())
    assert gone["stale"] is True and gone["stale_after"] is None
    assert gone["stale_reason"].startswith(
        "Stream events_log__events: the location file:/landing/events of source "
    )
    missing = stream_status(landing(None), files_record())
    assert missing["stale"] is True and missing["stale_after"] is None
    assert missing["stale_reason"].startswith(
        "Stream events_log__events: the set of files it consumed (old-set) is missing from "
        "`shop`.`dbt_streams_files`"
    )


def test_a_recreated_source_fails_a_build_naming_both_ids() -> None:
    source = Source(table_id="id-2")
    moved = replace(offset_at(source, 1), offset_timestamp=source.when(1) - timedelta(seconds=1))
    pending = commits_since_offset(source, "`raw`.`orders`", 1, moved.offset_timestamp)
    inspected = inspect_source(source, "`raw`.`orders`", "s")
    assert inspected is not None
    with pytest.raises(StreamError) as raised:
        same_source(source, "s", moved, inspected, pending)
    assert raised.value.msg == (
        "Stream s is stale: its source `raw`.`orders` was dropped and recreated or replaced "
        "(table id id-1 is now id-2), so offset 1 (committed "
        f"{moved.offset_timestamp:%Y-%m-%d %H:%M:%S}) means nothing in the new table. Rebuild "
        "with --full-refresh to recreate the stream."
    )


def test_describe_finds_the_stream_and_a_view_streams_table_offsets() -> None:
    statuses = [
        {"name": "paired_mirror__paired"},
        {"name": "paired_mirror__paired@shop.orders"},
        {"name": "paired_mirror__paired@shop.customers"},
        {"name": "paired_mirror__paired_2"},
    ]
    stream, tables = described_stream("paired_mirror__paired", statuses)
    assert stream == {"name": "paired_mirror__paired"}
    assert [table["name"] for table in tables] == [
        "paired_mirror__paired@shop.orders",
        "paired_mirror__paired@shop.customers",
    ]


def test_describe_of_an_unknown_stream_names_the_listing() -> None:
    with pytest.raises(StreamError) as raised:
        described_stream("nope", [{"name": "s"}])
    assert raised.value.msg == (
        "No stream named 'nope'. Run `dbt run-operation show_streams` to list the streams."
    )


class RegistryRows:
    """The registry's rows by name, and the statements run beside it."""

    def __init__(self, *records: StreamRecord) -> None:
        self.records = {r.name: r for r in records}
        self.statements: list[str] = []

    def run(self, sql: str) -> list[dict]:
        self.statements.append(sql)
        return []

    def get(self, name: str) -> StreamRecord | None:
        return self.records.get(name)

    def drop(self, name: str) -> None:
        del self.records[name]

    def all(self) -> list[StreamRecord]:
        return list(self.records.values())

    def ensure_table(self, name: str, columns: str) -> str:
        return f"`shop`.`{name}`"


def dropped(registry: RegistryRows, name: str, consumers: list[str]) -> StreamRecord:
    return drop_stream(registry.run, registry, name, consumers)  # type: ignore[arg-type]


def test_a_stream_whose_consumer_left_is_forgotten_with_what_its_kind_kept() -> None:
    table = replace(record("t", 1), consumer="model.shop.gone")
    files = replace(record("f", 1), consumer="model.shop.gone", source_type="files")
    registry = RegistryRows(table, files)
    assert dropped(registry, "t", ["model.shop.live"]) == table
    assert registry.statements == []
    assert dropped(registry, "f", ["model.shop.live"]) == files
    assert registry.statements == ["delete from `shop`.`dbt_streams_files` where stream = 'f'"]
    assert registry.records == {}


def test_a_view_streams_table_streams_go_with_it() -> None:
    gone = {"consumer": "model.shop.gone"}
    view = replace(record("v", 1), source_type="view", **gone)
    tables = [replace(record(f"v@shop.{t}", 1), **gone) for t in ("orders", "customers")]
    other = replace(record("vv@shop.orders", 1), **gone)
    registry = RegistryRows(view, *tables, other)
    assert dropped(registry, "v", []) == view
    assert list(registry.records) == ["vv@shop.orders"]


def test_a_live_consumers_stream_and_an_unknown_one_are_refused() -> None:
    live = replace(record("t", 1), consumer="model.shop.live")
    registry = RegistryRows(live)
    with pytest.raises(StreamError, match=r"is consumed by model\.shop\.live, which is still in"):
        dropped(registry, "t", ["model.shop.live"])
    with pytest.raises(StreamError, match="No stream named 'nope'"):
        dropped(registry, "nope", [])
    assert registry.records == {"t": live}
