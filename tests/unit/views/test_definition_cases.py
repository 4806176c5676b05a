"""A stream's view definition read as its user wrote it: CTEs inlined under the names the
query reads them by (the expanded query runs and returns the view's rows, on sqlglot's
Python executor), and a nested view's functions and errors handled as the top view's."""

from collections import Counter

import pytest
from sqlglot import exp

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition
from tests.unit.views.test_algebra import run
from tests.unit.views.test_definition import TABLES, FakeCatalog, TwoColumns

ORDERS = [{"id": 1, "cid": 1, "amt": 5}, {"id": 2, "cid": 2, "amt": 1}]
CUSTOMERS = [{"id": 1, "tier": 3}, {"id": 2, "tier": 4}]


def rows(view_sql: str, **more_views: str) -> Counter:
    """The expanded view shop.v run over ORDERS and CUSTOMERS."""
    views = {"shop.v": view_sql, **{k.replace("__", "."): v for k, v in more_views.items()}}
    view = read_view_definition(FakeCatalog(views, TABLES), "shop", "v", "s")
    expanded = view.sql.replace("`shop`.", "")
    return Counter(run(expanded, {"orders": ORDERS, "customers": CUSTOMERS}))


@pytest.mark.parametrize(
    "view_sql",
    [
        "with big as (select id, cid from orders where amt > 1) select big.id from big",
        "with big as (select id, cid from orders where amt > 1) select b.id from big b",
        "with big as (select id, cid from orders where amt > 1), "
        "named as (select big.id, c.tier from big join customers c on big.cid = c.id) "
        "select named.id from named",
    ],
)
def test_a_cte_is_inlined_under_the_name_the_query_reads_it_by(view_sql: str) -> None:
    assert rows(view_sql) == Counter({(1,): 1})


def test_a_cte_reads_the_table_a_later_cte_is_named_after() -> None:
    """A CTE sees only the CTEs before it: `customers` inside c is the table."""
    view_sql = (
        "with c as (select id from customers), customers as (select id from orders "
        "where amt > 1) select c.id from c"
    )
    view = read_view_definition(FakeCatalog({"shop.v": view_sql}, TABLES), "shop", "v", "s")
    assert view.tables == ("`shop`.`customers`",)
    assert rows(view_sql) == Counter({(1,): 1, (2,): 1})


def test_a_nested_view_may_use_a_builtin_the_parser_does_not_know() -> None:
    inner = "select id, crc32(cast(id as string)) as h from orders"
    view = read_view_definition(
        FakeCatalog({"shop.v": "select id from shop.inner_v", "shop.inner_v": inner}, TABLES),
        "shop",
        "v",
        "s",
    )
    assert "crc32(" in view.sql.lower()
    assert view.tables == ("`shop`.`orders`",)


def test_a_problem_one_view_down_names_that_view_alone() -> None:
    catalog = FakeCatalog(
        {"shop.v": "select * from shop.inner_v", "shop.inner_v": "select distinct id from orders"},
        TABLES,
    )
    with pytest.raises(StreamError) as raised:
        read_view_definition(catalog, "shop", "v", "s")
    assert raised.value.msg == (
        "Stream s: view shop.v uses DISTINCT; a stream's view may only use projections, "
        "filters, inner and cross joins and UNION ALL (in view shop.inner_v)."
    )


@pytest.mark.parametrize(
    "view_sql", ["select inner_v.id from shop.inner_v", "select x.id from shop.inner_v x"]
)
def test_a_nested_view_is_inlined_under_the_name_the_query_reads_it_by(view_sql: str) -> None:
    assert rows(view_sql, shop__inner_v="select id from orders where amt > 1") == Counter(
        {(1,): 1}
    )


def test_a_table_of_the_session_catalog_is_read_without_it() -> None:
    assert rows("select o.id from spark_catalog.shop.orders o") == Counter({(1,): 1, (2,): 1})
    assert rows("select o.id from SPARK_CATALOG.shop.orders o") == Counter({(1,): 1, (2,): 1})


def test_spark_sql_quoting_is_read_as_spark_reads_it() -> None:
    assert rows("select `id` as `order id` from `orders`") == Counter({(1,): 1, (2,): 1})


class NoNamespace(FakeCatalog):
    """Views described without `View Catalog and Namespace`, or with a bare schema."""

    def __init__(self, views, tables, namespace: str | None = None):
        super().__init__(views, tables)
        self.namespace = namespace

    def __call__(self, sql: str) -> list[Row]:
        described = super().__call__(sql)
        if self.namespace is None:
            return [row for row in described if row["col_name"] != "View Catalog and Namespace"]
        return [
            {**row, "data_type": self.namespace}
            if row["col_name"] == "View Catalog and Namespace"
            else row
            for row in described
        ]


def test_without_a_namespace_a_views_names_resolve_in_its_own_schema() -> None:
    views = {"shop.v": "select * from sales.inner_v", "sales.inner_v": "select id from orders"}
    catalog = NoNamespace(views, {"sales.orders": "delta"})
    assert read_view_definition(catalog, "shop", "v", "s").tables == ("`sales`.`orders`",)
    catalog = NoNamespace({"shop.v": "select id from orders"}, TABLES)
    assert read_view_definition(catalog, "shop", "v", "s").tables == ("`shop`.`orders`",)


def test_a_namespace_without_its_catalog_is_the_schema() -> None:
    catalog = NoNamespace({"shop.v": "select id from orders"}, {"sales.orders": "delta"}, "sales")
    assert read_view_definition(catalog, "shop", "v", "s").tables == ("`sales`.`orders`",)


def refusal(view_sql: str, tables: dict[str, str] = TABLES) -> str:
    with pytest.raises(StreamError) as raised:
        read_view_definition(FakeCatalog({"shop.v": view_sql}, tables), "shop", "v", "s")
    return raised.value.msg


def test_the_first_table_in_reading_order_that_cannot_be_read_is_named() -> None:
    message = refusal(
        "select r.id from (select id from shop.raw_events) r join gone g on r.id = g.id"
    )
    assert message == (
        "Stream s: view shop.v reads shop.raw_events, a parquet table; a view stream's tables "
        "must be Delta tables (convert it with CONVERT TO DELTA or recreate it USING delta)."
    )


def test_a_table_without_a_provider_is_named_an_unknown_table() -> None:
    assert refusal("select id from odd", {"shop.odd": ""}).startswith(
        "Stream s: view shop.v reads shop.odd, a unknown table; "
    )


def test_a_table_of_another_catalog_is_refused_by_its_name() -> None:
    assert refusal("select id from hive_metastore.shop.orders") == (
        "Stream s: view shop.v reads hive_metastore.shop.orders from another catalog."
    )


def test_a_definition_the_parser_refuses_names_where() -> None:
    message = refusal("select id from orders where (((")
    assert "cannot parse (" in message and ". Line 1, Col: " in message


def test_recorded_names_keep_their_own_letters() -> None:
    catalog = TwoColumns({"shop.v": "select * from orders"}, TABLES, {"shop.v": "[Xa, bX]"})
    view = read_view_definition(catalog, "shop", "v", "s")
    assert view.sql.startswith("SELECT `Xa` AS `x`, `bX` AS `y` FROM ")


def test_a_cte_named_as_the_table_it_reads_reads_that_table_once() -> None:
    view_sql = "with orders as (select id, amt * 2 as amt from orders) select amt from orders"
    assert rows(view_sql) == Counter({(10,): 1, (2,): 1})


def test_the_expanded_query_names_no_catalog() -> None:
    views = {"shop.v": "select o.id from spark_catalog.shop.orders o"}
    view = read_view_definition(FakeCatalog(views, TABLES), "shop", "v", "s")
    assert [table.catalog for table in view.query.find_all(exp.Table)] == [""]
    assert view.tables == ("`shop`.`orders`",)


def test_a_table_of_another_catalog_is_named_as_spark_spells_it() -> None:
    assert refusal("select id from lake.shop.`odd name`") == (
        "Stream s: view shop.v reads lake.shop.`odd name` from another catalog."
    )
