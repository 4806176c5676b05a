"""The one place a source's kind is chosen (no JVM): which kind reads which source, what the
choice asks the catalog, and the kind a registered stream belongs to."""

from dataclasses import replace

import pytest

from dbt.adapters.spark_streams.streams.kinds.choose import KINDS, kind_of, kind_of_record
from dbt.adapters.spark_streams.streams.kinds.delta_table import DELTA_TABLE
from dbt.adapters.spark_streams.streams.kinds.file_table import FILE_TABLE
from dbt.adapters.spark_streams.streams.kinds.view import VIEW
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import Row
from tests.unit.delta.test_source import COLUMNS, described
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
