"""Sources that widen a column (Delta's type widening, int to bigint). A materialized view's
aggregates over it change type, which the table's columns could not hold, so the next build
rebuilds the table from its sources' current rows and says why; the build after it refreshes
incrementally (a table whose columns match its query is not rebuilt), and the rows equal the
query's every time. A stream's mirror of a struct column whose field widened widens that
field in place (`ALTER COLUMN p.x TYPE bigint`), in the same run."""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, latest_version, sources_yml
from tests.functional.streams.test_dbt_edges import messages, offsets

SOURCES = sources_yml("shop", "orders", "customers", "points")
CDF = (
    "using delta tblproperties (delta.enableChangeDataFeed = true, "
    "delta.enableTypeWidening = true)"
)
QUERIES = {
    "totals": (
        "select customer_id, count(*) as orders, sum(qty) as quantity, max(qty) as largest,\n"
        "       avg(price) as average, min(price) as cheapest\n"
        "from {orders} group by customer_id"
    ),
    "by_customer": (
        "select c.id, c.region, count(o.id) as orders, max(o.qty) as largest\n"
        "from {customers} c left join {orders} o on o.customer_id = c.id\n"
        "group by c.id, c.region"
    ),
}
REFS = {
    "orders": "{{ source('shop', 'orders') }}",
    "customers": "{{ source('shop', 'customers') }}",
}


MIRROR = (
    "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
    "unique_key='id') }}\nselect id, p, metadata_action, metadata_isupdate "
    "from {{ stream(source('shop', 'points')) }}"
)


def model(name: str) -> str:
    return "{{ config(materialized='materialized_view') }}\n" + QUERIES[name].format(**REFS)


class TestWidenedSourceColumn(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        views = {f"{name}.sql": model(name) for name in QUERIES}
        return {"sources.yml": SOURCES, "points_mirror.sql": MIRROR, **views}

    def assert_equal_to_queries(self, project) -> None:
        schema = project.test_schema
        refs = {"orders": f"{schema}.orders", "customers": f"{schema}.customers"}
        for name, query in QUERIES.items():
            columns = ", ".join(QUERIES_COLUMNS[name])
            want = project.run_sql(f"select * from ({query.format(**refs)})", fetch="all")
            got = project.run_sql(f"select {columns} from {schema}.{name}", fetch="all")
            assert sorted(map(tuple, got)) == sorted(map(tuple, want)), name

    def column_type(self, project, table: str, column: str) -> str:
        rows = project.run_sql(f"describe table {project.test_schema}.{table}", fetch="all")
        return {row[0]: row[1] for row in rows}[column]

    def test_a_widened_source_column_rebuilds_its_views_once(self, project):
        schema, sql = project.test_schema, project.run_sql
        columns = "id int, customer_id int, qty int, price decimal(10,2)"
        sql(f"create table {schema}.orders ({columns}) {CDF}")
        sql(f"create table {schema}.customers (id int, region string) {CDF}")
        sql(f"create table {schema}.points (id int, p struct<x:int,y:int>) {CDF}")
        sql(f"insert into {schema}.customers values (1, 'north'), (2, 'south')")
        sql(
            f"insert into {schema}.orders values (1, 1, 5, 2.50), (2, 1, 7, 1.25), (3, 2, 1, 9.99)"
        )
        sql(f"insert into {schema}.points values (1, named_struct('x', 1, 'y', 2))")
        run_dbt(["run"])

        sql(f"alter table {schema}.orders change column qty type bigint")
        sql(f"insert into {schema}.orders values (4, 2, 3000000000, 0.10)")
        sql(f"alter table {schema}.points change column p.x type bigint")
        sql(f"insert into {schema}.points values (2, named_struct('x', 5000000000, 'y', 3))")
        said = messages(run_dbt(["run"]))
        for name in QUERIES:
            assert said[name].startswith(
                "OK, built from its sources' current rows (its query's columns changed: "
                "largest from int to bigint); consumed "
            ), said[name]
        assert "quantity" not in said["totals"]  # sum(int) was a bigint already
        assert self.column_type(project, "totals", "largest") == "bigint"
        assert self.column_type(project, "by_customer", "largest") == "bigint"
        self.assert_equal_to_queries(project)
        assert offsets(project, schema)["totals@" + f"{schema}.orders"] == latest_version(
            project, "orders"
        )
        assert said["points_mirror"].endswith("; widened p.x: int -> bigint"), said
        assert self.column_type(project, "points_mirror", "p") == "struct<x:bigint,y:int>"
        mirrored = f"select id, p.x, p.y from {schema}.points_mirror order by id"
        assert [tuple(r) for r in sql(mirrored, fetch="all")] == [(1, 1, 2), (2, 5000000000, 3)]

        sql(f"delete from {schema}.orders where id = 2")
        said = messages(run_dbt(["run"]))
        assert said["totals"].startswith("OK, refreshed incrementally: 1 group changed")
        assert said["by_customer"].startswith("OK, refreshed incrementally: 1 group changed")
        self.assert_equal_to_queries(project)


QUERIES_COLUMNS = {
    "totals": ["customer_id", "orders", "quantity", "largest", "average", "cheapest"],
    "by_customer": ["id", "region", "orders", "largest"],
}
