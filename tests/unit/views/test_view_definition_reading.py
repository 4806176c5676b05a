"""Reading a view's stored definition (no JVM; the catalog of test_view_definition): views
without one, definitions the parser refuses, recorded output columns however Spark quotes
them, and the schema unqualified names resolve in."""

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition
from tests.unit.views.test_view_definition import TABLES, FakeCatalog


class TemporaryView(FakeCatalog):
    """shop.v described without a stored definition, as a temporary view is."""

    def __call__(self, sql: str) -> list[Row]:
        rows = super().__call__(sql)
        return [row for row in rows if row["col_name"] != "View Text"]


def error(catalog: FakeCatalog, reader: str = "s") -> str:
    with pytest.raises(StreamError) as raised:
        read_view_definition(catalog, "shop", "v", reader)
    return raised.value.msg


def test_a_view_without_a_stored_definition_names_the_fix() -> None:
    assert error(TemporaryView({"shop.v": "select 1"}, TABLES)) == (
        "Stream s: view shop.v is a temporary view or has no stored definition; create it "
        "with CREATE VIEW."
    )


def test_a_definition_the_parser_refuses_names_the_first_line_of_why() -> None:
    message = error(FakeCatalog({"shop.v": "select id from orders where ((("}, TABLES))
    assert message.startswith("Stream s: view shop.v has a definition the adapter cannot parse (")
    assert message.endswith("); recreate the view in plain Spark SQL.")
    assert "\n" not in message


def test_a_nested_views_problem_names_the_chain_in_order() -> None:
    views = {
        "shop.v": "select * from shop.a",
        "shop.a": "select * from shop.b",
        "shop.b": "select * from shop.c",
        "shop.c": "select distinct id from orders",
    }
    message = error(FakeCatalog(views, TABLES), reader="changes(shop.v)")
    assert message.startswith("changes(shop.v): view shop.v uses DISTINCT")
    assert message.endswith("(in view shop.c, read through shop.b, shop.a).")


class TwoColumns(FakeCatalog):
    """shop.v's own columns are x and y."""

    def __call__(self, sql: str) -> list[Row]:
        rows = super().__call__(sql)
        if sql != "describe table extended `shop`.`v`":
            return rows
        own = [{"col_name": name, "data_type": "int"} for name in ("x", "y")]
        return [*own, *rows[1:]]


@pytest.mark.parametrize(
    ("recorded", "projection"),
    [
        ("[`a``b`, `c, d`]", "SELECT `a``b` AS `x`, `c, d` AS `y`"),
        ("[a, b]", "SELECT `a` AS `x`, `b` AS `y`"),
    ],
)
def test_recorded_output_columns_however_spark_quotes_them(recorded: str, projection: str):
    catalog = TwoColumns({"shop.v": "select * from orders"}, TABLES, {"shop.v": recorded})
    view = read_view_definition(catalog, "shop", "v", "s")
    assert view.sql.startswith(projection + " FROM (SELECT * FROM `shop`.`orders` AS `orders`)")
    assert view.sql.endswith(" AS `_stored`")


def test_unrecorded_or_mismatched_columns_read_the_query_as_is() -> None:
    catalog = FakeCatalog({"shop.v": "select id from orders"}, TABLES, {"shop.v": "[a, b]"})
    # one view column (id), two recorded: read as is
    assert read_view_definition(catalog, "shop", "v", "s").sql == (
        "SELECT `id` FROM `shop`.`orders` AS `orders`"
    )


def test_unqualified_names_resolve_in_the_views_own_namespace() -> None:
    class OtherNamespace(FakeCatalog):
        def __call__(self, sql: str) -> list[Row]:
            rows = super().__call__(sql)
            return [
                {**row, "data_type": "spark_catalog.sales"}
                if row["col_name"] == "View Catalog and Namespace"
                else row
                for row in rows
            ]

    catalog = OtherNamespace({"shop.v": "select id from orders"}, {"sales.orders": "delta"})
    assert read_view_definition(catalog, "shop", "v", "s").tables == ("`sales`.`orders`",)
