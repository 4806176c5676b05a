"""What the catalog says of a source, read once (no JVM): DESCRIBE's rows kept for the kind
that reads the source, a view told apart, and an unreadable name left to the kind's error."""

import pytest

from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry, as_key, quoted_name
from dbt.adapters.spark_streams.streams.sql.run import Row, described_once
from tests.unit.delta.test_source import COLUMNS, described


class Catalog:
    def __init__(
        self, provider: str | None, views: tuple[str, ...] = (), missing=False, kind=None
    ) -> None:
        self.provider, self.views, self.missing, self.kind = provider, views, missing, kind
        self.statements: list[str] = []

    def __call__(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("describe table extended"):
            if self.missing:
                raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND]")
            rows = described(COLUMNS, self.provider)
            return rows + ([{"col_name": "Type", "data_type": self.kind}] if self.kind else [])
        if sql.startswith("show views"):
            return [{"viewName": name} for name in self.views]
        if sql.startswith(("describe history", "alter table")):
            return []
        raise AssertionError(sql)


def test_describe_runs_once_whoever_asks() -> None:
    catalog = Catalog("delta")
    entry = CatalogEntry(catalog, "raw", "orders")
    assert entry.name == "`raw`.`orders`"
    assert not entry.is_view
    assert entry.described == described(COLUMNS, "delta")
    assert catalog.statements == ["describe table extended `raw`.`orders`"]


def test_a_view_has_no_provider_and_is_listed_among_the_views() -> None:
    assert CatalogEntry(Catalog(None, views=("orders",)), "raw", "orders").is_view
    assert not CatalogEntry(Catalog(None, views=("orders_v",)), "raw", "orders").is_view
    assert not CatalogEntry(Catalog("parquet", views=("orders",)), "raw", "orders").is_view


def test_a_catalog_view_says_so_in_its_detail_section() -> None:
    # its Type decides, without listing the schema's views; a temporary view, which
    # describes no Type, is looked for among them (above)
    catalog = Catalog(None, kind="VIEW")
    assert CatalogEntry(catalog, "raw", "orders").is_view
    assert not CatalogEntry(
        Catalog(None, views=("orders",), kind="MANAGED"), "raw", "orders"
    ).is_view
    assert catalog.statements == ["describe table extended `raw`.`orders`"]


def test_a_stream_describes_each_name_once_until_something_is_written() -> None:
    catalog = Catalog("delta")
    first, other = "describe table extended `raw`.`orders`", "describe table extended `raw`.`c`"
    with described_once(catalog) as once:
        assert once(first) == once(first) == described(COLUMNS, "delta")
        once(other)
        once("describe history `raw`.`orders` limit 1")  # a read: the answers stand
        once(first)
        once("alter table `raw`.`orders` set tblproperties ('a' = 'b')")  # a write: asked again
        once(first)
    once(first)  # outside its `with`: every statement runs
    assert catalog.statements == [
        first,
        other,
        "describe history `raw`.`orders` limit 1",
        "alter table `raw`.`orders` set tblproperties ('a' = 'b')",
        first,
        first,
    ]


def test_an_unreadable_name_is_no_view_and_its_error_comes_with_the_rows() -> None:
    entry = CatalogEntry(Catalog(None, missing=True), "raw", "orders")
    assert not entry.is_view
    with pytest.raises(RuntimeError, match="TABLE_OR_VIEW_NOT_FOUND"):
        _ = entry.described


@pytest.mark.parametrize(
    ("given", "key"),
    [(None, ()), ("", ()), ("id", ("id",)), (["id", "day"], ("id", "day")), (("a",), ("a",))],
)
def test_a_unique_key_as_dbt_accepts_it(given: object, key: tuple[str, ...]) -> None:
    assert as_key(given) == key


def test_a_table_name_is_quoted_for_delta_statements() -> None:
    # Delta's grammar reads `describe detail s.history` as Spark's DESCRIBE of a column
    assert quoted_name("shop.history") == "`shop`.`history`"
    assert quoted_name("spark_catalog.shop.detail") == "`spark_catalog`.`shop`.`detail`"
    assert quoted_name("`shop`.`odd.name`") == "`shop`.`odd.name`"  # quoted: as it is
