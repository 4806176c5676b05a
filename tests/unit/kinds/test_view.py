"""Resolving a stream on a view over two Delta tables, on a fake catalog (no JVM): the first
build's initial rows at the tables' pins, a later build's change read from each table
stream's offset, the records a build moves, and what is refused.

The catalog answers the view's definition (test_view_definition.FakeCatalog), each base table
as a Delta table at version 3, and the registry's log from `stored`.
"""

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.kinds.view import resolve_view_stream
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition
from tests.unit.frozen_clock import freeze_staleness_clock
from tests.unit.offsets.test_registry import record
from tests.unit.views.test_definition import FakeCatalog


@pytest.fixture(autouse=True)
def _a_day_after_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_staleness_clock(monkeypatch, T0 + timedelta(days=1))


T0 = datetime(2026, 11, 24, 9, 0, 0)
VIEW = "select o.id from orders o join customers c on o.id = c.id"
TABLES = {"shop.orders": "delta", "shop.customers": "delta"}
NAME = "paired_mirror__paired"
CONSUMER = "model.shop.paired_mirror"


class Shop(FakeCatalog):
    """The view shop.paired over two Delta tables at version 3, and the registry."""

    def __init__(self, view: str = VIEW, stored: dict[str, StreamRecord] | None = None):
        super().__init__({"shop.paired": view}, TABLES)
        self.stored = stored or {}
        self.statements: list[str] = []

    def __call__(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("show tblproperties"):
            return [{"key": "delta.enableChangeDataFeed", "value": "true"}]
        if sql.startswith("describe history"):
            limit = int(sql.split(" limit ")[1]) if " limit " in sql else 4
            return [history_row(version) for version in range(3, -1, -1)][:limit]
        if sql.startswith("describe detail"):
            return [{"id": "id-" + sql.split("`")[3]}]
        if sql.startswith("show views in `analytics`"):
            return [{"viewName": "dbt_streams"}]
        if sql.startswith("select * from `analytics`.`dbt_streams_log` where name = "):
            name = sql.split("'")[1]
            return [as_row(self.stored[name])] if name in self.stored else []
        if sql.startswith(("create ", "show tables")):
            return []
        return super().__call__(sql)


def history_row(version: int) -> Row:
    when = T0 + timedelta(minutes=version)
    return {"version": version, "timestamp": when, "operation": "WRITE"}


def as_row(stored: StreamRecord) -> Row:
    return {**vars(stored), "unique_key": "[]", "recorded_at": T0}


def request(**fields) -> StreamRequest:
    values = {
        "name": NAME, "schema": "shop", "identifier": "paired", "mode": "standard",
        "unique_key": ("id",), "show_initial_rows": True, "start": None, "start_at": False,
        **fields,
    }  # fmt: skip
    return StreamRequest(**values)


def build(exists: bool = True, **fields) -> StreamBuild:
    return StreamBuild(CONSUMER, "analytics", "`analytics`.`paired_mirror`", exists, False, True,
                       **fields)  # fmt: skip


def resolve(shop: Shop, the_build: StreamBuild, **fields) -> str:
    return resolve_view_stream(shop, Registry(shop, "analytics"), the_build, request(**fields))


def offsets(offset: int, fingerprint: str | None = None) -> dict[str, StreamRecord]:
    """The registry after a build that consumed both tables up to `offset`."""
    view = read_view_definition(Shop(), "shop", "paired", NAME)
    own = replace(
        record(NAME, 4, offset=offset),
        source_table="`shop`.`paired`",
        source_id=fingerprint or view.fingerprint,
        source_type="view",
        consumer=CONSUMER,
    )
    tables = {
        f"{NAME}@shop.{table}": replace(
            record(f"{NAME}@shop.{table}", 4, offset=offset),
            source_table=f"`shop`.`{table}`",
            source_id=f"id-{table}",
            consumer=CONSUMER,
            offset_timestamp=history_row(offset)["timestamp"],
        )
        for table in ("orders", "customers")
    }
    return {NAME: own, **tables}


def test_a_first_build_reads_the_views_rows_at_the_tables_pins() -> None:
    the_build = build(exists=False)
    sql = resolve(Shop(), the_build)
    assert "(SELECT * FROM `shop`.`orders` VERSION AS OF 3) AS `o`" in sql
    assert "(SELECT * FROM `shop`.`customers` VERSION AS OF 3) AS `c`" in sql
    assert "TABLE_CHANGES" not in sql.upper()
    assert sorted(the_build.reads) == [
        NAME, f"{NAME}@shop.customers", f"{NAME}@shop.orders"
    ]  # fmt: skip
    own = the_build.reads[NAME][0]
    assert (own.source_type, own.offset_version, own.unique_key) == ("view", 3, ("id",))
    assert own.source_table == "`shop`.`paired`"
    assert the_build.reads[f"{NAME}@shop.orders"][0].offset_version == 3


def test_a_first_build_without_initial_rows_reads_none() -> None:
    sql = resolve(Shop(), build(exists=False), show_initial_rows=False)
    assert "TABLE_CHANGES" not in sql.upper() and " where false" in sql


def test_a_later_build_reads_each_tables_changes_from_its_offset() -> None:
    the_build = build()
    sql = resolve(Shop(stored=offsets(1)), the_build)
    # dA joined with B as of its offset, and A as of its pin joined with dB
    assert (
        "FROM TABLE_CHANGES('`shop`.`orders`', 2, 3)) AS `o` "
        "JOIN (SELECT * FROM `shop`.`customers` VERSION AS OF 1) AS `c`"
    ) in sql
    assert (
        "(SELECT * FROM `shop`.`orders` VERSION AS OF 3) AS `o` JOIN (SELECT `id`, CASE WHEN "
    ) in sql
    assert "FROM TABLE_CHANGES('`shop`.`customers`', 2, 3)) AS `c`" in sql
    assert the_build.moves
    assert the_build.reads[f"{NAME}@shop.customers"][0].offset_version == 3


def test_a_first_build_from_a_moment_reads_from_each_tables_state_then() -> None:
    the_build = build(exists=False)
    moment = (T0 + timedelta(minutes=1, seconds=30)).strftime("%Y-%m-%d %H:%M:%S")
    sql = resolve(Shop(), the_build, start={"timestamp": moment}, start_at=True)
    assert "FROM TABLE_CHANGES('`shop`.`orders`', 2, 3)) AS `o`" in sql
    assert "(SELECT * FROM `shop`.`customers` VERSION AS OF 1) AS `c`" in sql


def test_every_reference_in_a_build_reads_the_same_rows() -> None:
    shop = Shop(stored=offsets(1))
    the_build = build()
    first = resolve(shop, the_build)
    statements = len(shop.statements)
    assert resolve(shop, the_build) == first
    assert len(shop.statements) == statements


def test_a_redefined_view_is_stale() -> None:
    with pytest.raises(StreamError) as raised:
        resolve(Shop(stored=offsets(1, fingerprint="old")), build())
    assert raised.value.msg == (
        f"Stream {NAME} is stale: view shop.paired (or a view it reads) was redefined since "
        "the stream was created, so its offsets no longer describe the view's rows. Rebuild "
        "the consumer with --full-refresh to recreate the stream."
    )


def test_a_missing_table_offset_names_the_fix() -> None:
    stored = offsets(1)
    del stored[f"{NAME}@shop.customers"]
    with pytest.raises(StreamError) as raised:
        resolve(Shop(stored=stored), build())
    assert raised.value.msg == (
        f"Stream {NAME}: the offset on `shop`.`customers` is missing from the registry. "
        "Rebuild the consumer with --full-refresh to recreate the stream."
    )


def test_a_key_the_view_lacks_is_named() -> None:
    with pytest.raises(StreamError) as raised:
        resolve(Shop(), build(exists=False), unique_key=("customer",))
    assert raised.value.msg == (
        f"Stream {NAME}: unique_key column(s) customer not in view shop.paired (columns: id). "
        "Name columns of the view that are unique in it, or give no unique_key (rows then net "
        "as values)."
    )


def test_insert_only_and_history_are_refused_before_reading() -> None:
    shop = Shop()
    with pytest.raises(StreamError) as raised:
        resolve(shop, build(), mode="insert_only")
    assert raised.value.msg == (
        f"Stream {NAME}: mode 'insert_only' is not supported on views; use standard or "
        "append_only."
    )
    with pytest.raises(StreamError) as raised:
        resolve(shop, build(), every_version=True)
    assert raised.value.msg == (
        f"Stream {NAME}: incremental_strategy 'history' reads table streams only; a view "
        "stream's rows are the net change of view shop.paired. Keep the history of its "
        "tables, or use apply_changes."
    )
    assert shop.statements == []


def test_a_dry_run_records_nothing() -> None:
    the_build = build(dry_run="--empty")
    sql = resolve(Shop(stored=offsets(1)), the_build)
    assert " where false" in sql and the_build.reads == {}


def test_an_append_only_view_stream_reads_the_inserts_without_netting() -> None:
    sql = resolve(Shop(stored=offsets(1)), build(), mode="append_only")
    assert "_change_type = 'insert'" in sql
    assert "row_number()" not in sql.lower()  # no netting window
    netted = resolve(Shop(stored=offsets(1)), build())
    assert "row_number()" in netted.lower() or "count_if" in netted.lower()


def test_a_full_refresh_starts_a_view_stream_over_at_the_pins() -> None:
    """--full-refresh recreates the stream: the view's rows at the pins, as on a first build,
    and every table's offset moves to its pin."""
    refreshed = StreamBuild(CONSUMER, "analytics", "`analytics`.`paired_mirror`", True, True, True)
    sql = resolve(Shop(stored=offsets(1)), refreshed)
    assert "TABLE_CHANGES" not in sql.upper()
    assert "(SELECT * FROM `shop`.`orders` VERSION AS OF 3) AS `o`" in sql
    assert refreshed.reads[f"{NAME}@shop.orders"][0].offset_version == 3
    assert refreshed.reads[NAME][0].created_on > offsets(1)[NAME].created_on
