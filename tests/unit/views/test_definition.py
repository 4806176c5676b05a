"""A stream's view definition: expansion to Delta tables, and every refused construct named
with the view it sits in (catalog answers faked; tests/functional checks them on Spark)."""

import pytest

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.kinds.view import resolve_view_stream
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest
from dbt.adapters.spark_streams.streams.travel.changes_on_views import view_changes_sql
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition

BUILTINS = {"upper", "concat_ws", "date_add", "coalesce", "nvl2", "abs", "substring", "crc32"}


class FakeCatalog:
    """DESCRIBE TABLE EXTENDED and SHOW SYSTEM FUNCTIONS as Spark answers them."""

    def __init__(
        self, views: dict[str, str], tables: dict[str, str], outputs: dict[str, str] | None = None
    ):
        self.views = views
        self.tables = tables
        self.outputs = outputs or {}  # a view's recorded query output columns, as "[a, b]"

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("show system functions like "):
            name = sql.split("'")[1]
            return [{"function": name}] if name in BUILTINS else []
        assert sql.startswith("describe table extended "), sql
        name = sql.removeprefix("describe table extended ").replace("`", "")
        header = [{"col_name": "id", "data_type": "bigint"}, {"col_name": "", "data_type": ""}]
        detail = [{"col_name": "# Detailed Table Information", "data_type": ""}]
        if name in self.views:
            schema = name.split(".")[0]
            return (
                header
                + detail
                + [
                    {"col_name": "Type", "data_type": "VIEW"},
                    {"col_name": "View Text", "data_type": self.views[name]},
                    {
                        "col_name": "View Catalog and Namespace",
                        "data_type": f"spark_catalog.{schema}",
                    },
                ]
                + [
                    {"col_name": "View Query Output Columns", "data_type": self.outputs[name]}
                    for _ in [name]
                    if name in self.outputs
                ]
            )
        if name in self.tables:
            return (
                header
                + detail
                + [
                    {"col_name": "Type", "data_type": "MANAGED"},
                    {"col_name": "Provider", "data_type": self.tables[name]},
                ]
            )
        if name == "shop.locked":
            raise RuntimeError("[INSUFFICIENT_PERMISSIONS] no SELECT on shop.locked")
        raise RuntimeError(f"[TABLE_OR_VIEW_NOT_FOUND] {name}")


TABLES = {"shop.orders": "delta", "shop.customers": "delta", "shop.raw_events": "parquet"}


def expand(view_sql: str, **more_views: str):
    views = {"shop.v": view_sql, **{k.replace("__", "."): v for k, v in more_views.items()}}
    return read_view_definition(FakeCatalog(views, TABLES), "shop", "v", "s")


def test_joins_filters_unions_and_ctes_expand_to_qualified_delta_tables():
    view = expand(
        "with big as (select * from orders where amount > 10) "
        "select o.id, upper(c.name) as name, o.amount * 2 as doubled "
        "from big o join customers c on o.customer_id = c.id "
        "cross join orders o2 "
        "union all select id, coalesce(region, '?'), 0 from shop.inner_v",
        shop__inner_v="select c.id, c.region from customers c, orders where orders.id = c.id",
    )
    assert view.tables == (
        "`shop`.`orders`", "`shop`.`customers`", "`shop`.`orders`",
        "`shop`.`customers`", "`shop`.`orders`",
    )  # fmt: skip
    assert "FROM `shop`.`inner_v`" not in view.sql and "FROM `big`" not in view.sql
    assert "JOIN `shop`.`customers` AS `c`" in view.sql


def test_a_builtin_function_the_parser_does_not_know_is_looked_up_once_and_kept():
    asked: list[str] = []
    catalog = FakeCatalog({"shop.v": "select id, crc32(name) as c, crc32(id) as d from orders"},
                          TABLES)  # fmt: skip

    def run(sql: str) -> list[Row]:
        asked.append(sql)
        return catalog(sql)

    view = read_view_definition(run, "shop", "v", "s")
    assert view.sql.lower().count("crc32(") == 2
    assert asked.count("show system functions like 'crc32'") == 1


def test_a_view_reads_the_columns_spark_recorded_renamed_to_its_own():
    """`create view v (id) as select * from orders`: Spark reads the query's recorded output
    column by name and renames it, so a column added to orders later does not reach the view."""
    catalog = FakeCatalog({"shop.v": "select * from orders"}, TABLES, {"shop.v": "[`order_id`]"})
    view = read_view_definition(catalog, "shop", "v", "s")
    assert view.sql == (
        "SELECT `order_id` AS `id` FROM (SELECT * FROM `shop`.`orders` AS `orders`) AS `_stored`"
    )
    assert view.tables == ("`shop`.`orders`",)


def test_fingerprint_follows_every_view_of_the_chain():
    one = expand("select * from shop.inner_v", shop__inner_v="select id from orders")
    same = expand("select * from shop.inner_v", shop__inner_v="select id from orders")
    other = expand("select * from shop.inner_v", shop__inner_v="select id from customers")
    assert one.fingerprint == same.fingerprint != other.fingerprint


REFUSED = [
    ("select customer_id, count(*) from orders group by customer_id", "an aggregate function"),
    ("select distinct customer_id from orders", "DISTINCT"),
    ("select id from orders union select id from customers", "UNION without ALL"),
    ("select id from orders intersect select id from customers", "INTERSECT"),
    ("select id from orders except all select id from customers", "EXCEPT"),
    ("select id, row_number() over (order by id) from orders", "a window function"),
    ("select id from orders qualify id > 1", "QUALIFY"),
    ("select id from orders limit 5", "LIMIT"),
    ("select id from orders order by id", "ORDER BY"),
    ("select o.id from orders o left join customers c on o.id = c.id", "a LEFT JOIN"),
    ("select o.id from orders o full outer join customers c on o.id = c.id", "a FULL"),
    ("select o.id from orders o left semi join customers c on o.id = c.id", "a LEFT SEMI JOIN"),
    ("select o.id from orders o left anti join customers c on o.id = c.id", "a LEFT ANTI JOIN"),
    (
        "select id from orders where id in (select id from customers)",
        "a subquery outside FROM (IN)",
    ),
    ("select id from orders where exists (select 1 from customers)", "(EXISTS)"),
    ("select (select max(id) from customers) from orders", "(scalar subquery)"),
    ("select id, c from orders lateral view explode(array(1)) t as c", "LATERAL VIEW"),
    ("select explode(array(id)) from orders", "a generator function (explode)"),
    ("select id, rand() from orders", "a non-deterministic function (rand)"),
    ("select id, current_timestamp() from orders", "a non-deterministic function"),
    ("select id, uuid() from orders", "a non-deterministic function (uuid)"),
    ("select id, my_udf(id) from orders", "a user-defined function (my_udf)"),
    ("select id from orders tablesample (10 percent)", "TABLESAMPLE"),
    ("select * from range(10)", "a table-valued function"),
    ("select * from shop.raw_events", "reads shop.raw_events, a parquet table"),
]


@pytest.mark.parametrize(("definition", "named"), REFUSED)
def test_each_unsupported_construct_is_refused_by_name(definition: str, named: str):
    with pytest.raises(StreamError) as error:
        expand(definition)
    message = str(error.value)
    assert "Stream s: view shop.v " in message
    assert named in message


def test_a_nested_view_s_construct_names_the_chain():
    with pytest.raises(StreamError) as error:
        expand(
            "select * from shop.mid",
            shop__mid="select * from shop.region_totals",
            shop__region_totals="select region, sum(amount) from orders group by region",
        )
    message = str(error.value)
    assert "Stream s: view shop.v uses an aggregate function (sum)" in message or (
        "Stream s: view shop.v uses GROUP BY" in message
    )
    assert "(in view shop.region_totals, read through shop.mid)" in message
    assert "may only use projections, filters, inner and cross joins and UNION ALL" in message


def test_a_missing_table_is_named_with_the_fix():
    with pytest.raises(StreamError) as error:
        expand("select * from gone")
    assert " ".join(str(error.value).split()) == (
        "Runtime Error Stream s: view shop.v reads shop.gone, which is not there (dropped or "
        "renamed). Restore it (its stream carries on from its offset if it is the same table), "
        "or change the query that reads it."
    )
    with pytest.raises(StreamError, match=r"reads shop\.locked, which cannot be read \(\[INSUFF"):
        expand("select * from locked")


def test_changes_on_a_view_refuses_version_points():
    request = ChangesRequest("shop", "v", at={"version": 3})
    with pytest.raises(StreamError, match=r"a view has none of its own; give \{'timestamp'"):
        view_changes_sql(FakeCatalog({}, {}), {}, lambda _: None, request)


@pytest.mark.parametrize("start_at, which", [(True, "at"), (False, "before")])
def test_a_view_stream_refuses_version_points_before_reading_anything(start_at, which):
    asked: list[str] = []
    request = StreamRequest("s", "shop", "v", "standard", (), True, {"version": 3}, start_at)
    build = StreamBuild("model.p.m", "shop", "`shop`.`m`", False, False, True)
    with pytest.raises(StreamError) as error:
        resolve_view_stream(asked.append, None, build, request)  # type: ignore[arg-type]
    assert " ".join(str(error.value).split()[2:]) == (
        f"Stream s: {which}={{'version': ...}} names a version of one table, and view shop.v "
        f"has none of its own; give {which}={{'timestamp': 'YYYY-MM-DD HH:MM:SS'}} (every base "
        "table as of that time)."
    )
    assert asked == []


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
