"""The one place a source's kind is chosen (no JVM): which kind reads which source, what the
choice asks the catalog, and the kind a registered stream belongs to."""

from dataclasses import replace
from datetime import timedelta

import pytest

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds import choose
from dbt.adapters.spark_streams.streams.kinds.choose import KINDS, kind_of, kind_of_record
from dbt.adapters.spark_streams.streams.kinds.delta_table import DELTA_TABLE
from dbt.adapters.spark_streams.streams.kinds.file_table import FILE_TABLE
from dbt.adapters.spark_streams.streams.kinds.table_stream import resolve_stream
from dbt.adapters.spark_streams.streams.kinds.view import VIEW
from dbt.adapters.spark_streams.streams.offsets.registry import Registry
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest, table_changes_sql
from dbt.adapters.spark_streams.streams.travel.changes_on_views import view_changes_sql
from tests.unit.delta.test_source import COLUMNS, described
from tests.unit.frozen_clock import freeze_staleness_clock
from tests.unit.kinds.test_delta_table import Orders
from tests.unit.kinds.test_file_table import NAME as FILE_STREAM
from tests.unit.kinds.test_file_table import Landing
from tests.unit.kinds.test_file_table import build as file_build
from tests.unit.kinds.test_file_table import resolve as resolve_files
from tests.unit.kinds.test_table_stream import request as table_request
from tests.unit.kinds.test_view import NAME as VIEW_STREAM
from tests.unit.kinds.test_view import T0, Shop
from tests.unit.kinds.test_view import build as view_build
from tests.unit.kinds.test_view import request as view_request
from tests.unit.kinds.test_view import resolve as resolve_view
from tests.unit.offsets.test_registry import record


class Catalog:
    """`raw`.`orders` as a Delta table, a view, a Parquet table or missing; counts statements."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.statements: list[str] = []

    def __call__(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("describe table extended"):
            if self.what == "missing":
                raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] `raw`.`orders`")
            provider = {"delta": "delta", "parquet": "parquet"}.get(self.what)
            return described(COLUMNS, provider)
        if sql.startswith("show views"):
            return [{"viewName": "orders"}] if self.what == "view" else []
        if sql.startswith("show tblproperties"):
            return [{"key": "delta.enableChangeDataFeed", "value": "true"}]
        raise AssertionError(sql)


def chosen(what: str, mode: str | None) -> tuple[object, list[str]]:
    catalog = Catalog(what)
    return kind_of(CatalogEntry(catalog, "raw", "orders"), mode), catalog.statements


def test_every_insert_only_stream_is_a_file_tables_without_asking_the_catalog() -> None:
    for what in ("delta", "view", "parquet", "missing"):
        assert chosen(what, "insert_only") == (FILE_TABLE, [])


@pytest.mark.parametrize("mode", ["standard", "append_only", None])
def test_a_view_is_read_as_a_view(mode: str | None) -> None:
    kind, statements = chosen("view", mode)
    assert kind is VIEW
    assert [s.split(" `")[0] for s in statements] == ["describe table extended", "show views in"]


@pytest.mark.parametrize("what", ["delta", "parquet", "missing"])
def test_anything_else_is_the_delta_tables_which_names_what_is_wrong(what: str) -> None:
    kind, statements = chosen(what, "standard")
    assert kind is DELTA_TABLE
    assert statements == ["describe table extended `raw`.`orders`"]


def test_the_delta_table_describes_its_source_from_the_rows_the_choice_read() -> None:
    catalog = Catalog("delta")
    entry = CatalogEntry(catalog, "raw", "orders")
    assert kind_of(entry, "standard") is DELTA_TABLE
    source = DELTA_TABLE.describe(catalog, entry, "s")
    assert source.name == "`raw`.`orders`" and source.change_data_feed
    assert catalog.statements == [
        "describe table extended `raw`.`orders`",
        "show tblproperties `raw`.`orders`",
    ]


def test_a_stream_belongs_to_the_kind_it_was_created_on() -> None:
    stream = record("s", 1)
    assert kind_of_record(replace(stream, source_type="view")) is VIEW
    assert kind_of_record(replace(stream, source_type="files")) is FILE_TABLE
    assert kind_of_record(replace(stream, source_type="delta")) is DELTA_TABLE
    assert kind_of_record(replace(stream, source_type="")) is DELTA_TABLE


def test_each_kind_is_registered_once_with_its_own_source_type() -> None:
    types = [kind.source_type for kind in KINDS]
    assert sorted(types) == ["delta", "files", "view"]


# The kinds through choose.py's entry points: each reads its source as its own module does.


class OrdersWithRegistry(Orders):
    """raw.orders (test_delta_table.py) beside an empty registry in `analytics`."""

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("show views in `analytics`"):
            return [{"viewName": "dbt_streams"}]
        if sql.startswith(("create ", "select * from `analytics`.`dbt_streams_log`")):
            return []
        return super().__call__(sql)


class ShopListingItsView(Shop):
    """The shop of test_view.py, whose schema lists the view shop.paired."""

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("show views in `shop`"):
            return [{"viewName": "paired"}]
        return super().__call__(sql)


def first_build(target: str = "`analytics`.`orders_mirror`") -> StreamBuild:
    return StreamBuild("model.shop.orders_mirror", "analytics", target, False, False, True)


def test_a_stream_on_a_delta_table_is_read_as_the_table_stream_flow_reads_it() -> None:
    run, request = OrdersWithRegistry(), table_request(schema="raw", identifier="orders")
    chosen_build, direct_build = first_build(), first_build()
    sql = choose.stream_sql(run, Registry(run, "analytics"), chosen_build, request)
    entry = CatalogEntry(run, "raw", "orders")
    direct = resolve_stream(
        run, Registry(run, "analytics"), direct_build, request, DELTA_TABLE, entry
    )
    assert sql == direct and "version as of 6" in sql
    [(record_read, _)] = chosen_build.reads.values()
    assert (record_read.source_type, record_read.source_id) == ("delta", "table-9")


def test_a_stream_on_a_view_is_read_by_the_view_kind() -> None:
    shop, chosen_build = ShopListingItsView(), view_build(exists=False)
    sql = choose.stream_sql(shop, Registry(shop, "analytics"), chosen_build, view_request())
    assert sql == resolve_view(Shop(), view_build(exists=False))
    assert chosen_build.reads[VIEW_STREAM][0].source_type == "view"


def test_an_insert_only_stream_is_read_by_the_file_table_kind() -> None:
    landing, chosen_build = Landing(2), file_build()
    request = table_request(
        FILE_STREAM, schema="landing", identifier="events", mode="insert_only", unique_key=()
    )
    sql = choose.stream_sql(landing, Registry(landing, "analytics"), chosen_build, request)
    assert sql == resolve_files(Landing(2), file_build())
    assert chosen_build.reads[FILE_STREAM][0].source_type == "files"


def test_changes_on_a_table_and_on_a_view_are_read_by_their_kinds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the fixtures' histories were written on 2026-11-24 and 25: read them two days later, as
    # any day would, not a week later, when their files would be past the retention
    freeze_staleness_clock(monkeypatch, T0 + timedelta(days=2))
    request = ChangesRequest("raw", "orders", at={"version": 4})
    nobody = lambda name: None  # noqa: E731 - no stream is named
    sql = choose.changes_sql(OrdersWithRegistry(), {}, nobody, request)
    assert sql == table_changes_sql(OrdersWithRegistry(), {}, nobody, request)
    assert "table_changes_by_path('file:/warehouse/raw.db/orders', 5, 6)" in sql
    at_view = ChangesRequest("shop", "paired", at={"timestamp": "2026-11-24 09:01:00"})
    on_view = choose.changes_sql(ShopListingItsView(), {}, nobody, at_view)
    assert on_view == view_changes_sql(Shop(), {}, nobody, at_view)


def test_changes_on_a_file_table_name_what_reads_it() -> None:
    request = ChangesRequest("landing", "events", at={"version": 1})
    with pytest.raises(StreamError, match="is a parquet table; standard and append_only"):
        choose.changes_sql(Catalog("parquet"), {}, lambda name: None, request)
    with pytest.raises(StreamError) as raised:
        FILE_TABLE.changes(Catalog("parquet"), {}, lambda name: None, request, None)  # type: ignore[arg-type]
    assert raised.value.msg == (
        "changes(landing.events): a file table has no versions to read changes between; read "
        "its new files with stream(..., mode='insert_only')."
    )
