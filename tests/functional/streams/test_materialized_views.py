"""Materialized views as a user builds them: revenue by customer over orders joined to
customers, customers left-joined to their orders, orders by region over a full join, a count
of distinct statuses with HAVING, SELECT DISTINCT, a global aggregate, and a window query that
refreshes fully. After each batch of inserts, updates and deletes every
target equals its query recomputed, the result lines name the path each took, the streams the
materializations own are listed with offsets at the sources' versions, and a changed
definition rebuilds.
"""

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import DeltaProject, latest_version, sources_yml
from tests.functional.streams.test_dbt_edges import messages

SOURCES = sources_yml("shop", "orders", "customers")
CDF = "using delta tblproperties (delta.enableChangeDataFeed = true)"
QUERIES = {
    "revenue_by_customer": (
        "select c.id as customer_id, c.region, count(*) as orders, sum(o.amount) as revenue,\n"
        "       avg(o.amount) as average, min(o.amount) as smallest, max(o.amount) as largest\n"
        "from {orders} o join {customers} c on o.customer_id = c.id\n"
        "where o.status != 'cancelled'\n"
        "group by c.id, c.region"
    ),
    "customer_revenue": (
        "select c.id as customer_id, c.region, count(o.id) as orders,\n"
        "       coalesce(sum(o.amount), 0) as revenue\n"
        "from {customers} c left join {orders} o on o.customer_id = c.id\n"
        "group by c.id, c.region"
    ),
    "orders_by_region": (
        "select c.region, count(*) as orders, max(o.amount) as largest\n"
        "from {orders} o full join {customers} c on o.customer_id = c.id\n"
        "group by c.region"
    ),
    "statuses": (
        "select customer_id, count(distinct status) as statuses, count(*) as orders\n"
        "from {orders} group by customer_id having count(*) > 1"
    ),
    "regions": "select distinct region from {customers}",
    "totals": (
        "select count(*) as orders, sum(amount) as revenue, avg(amount) as average\nfrom {orders}"
    ),
    "ranked": (
        "select id, amount,\n       rank() over (order by amount desc) as place\nfrom {orders}"
    ),
}
# Marts over other models: an ephemeral model (a WITH clause dbt adds, followed), a table
# model and a materialized view that refreshes fully (both replaced at each run: read whole).
QUERIES["paid_by_customer"] = (
    "select customer_id, count(*) as orders, sum(amount) as paid\n"
    "from {paid_orders} p\ngroup by customer_id"
)
QUERIES["copied_statuses"] = (
    "select status, count(*) as orders\nfrom {order_copy}\ngroup by status"
)
QUERIES["podium"] = (
    "select count(*) as placed, max(amount) as least\nfrom {ranked} where place <= 3"
)
UPSTREAM = {
    "paid_orders.sql": "{{ config(materialized='ephemeral') }}\n"
    "select id, customer_id, amount from {{ source('shop', 'orders') }} where status = 'paid'",
    "order_copy.sql": "{{ config(materialized='table') }}\n"
    "select * from {{ source('shop', 'orders') }}",
}
SOURCE_REFS = {
    "orders": "{{ source('shop', 'orders') }}",
    "customers": "{{ source('shop', 'customers') }}",
    "paid_orders": "{{ ref('paid_orders') }}",
    "order_copy": "{{ ref('order_copy') }}",
    "ranked": "{{ ref('ranked') }}",
}


# The same query, estimated: with rebuild_min_bytes 0 the view stream's estimate runs on these
# small tables, where any change reads every file, so a refresh recomputes the whole query.
# And extremes of one table: its change's terms read nothing else, but a deleted extremum's
# group is recomputed from the whole input, which the estimate counts. And an outer join,
# whose refresh recomputes the touched groups from its tables read whole.
QUERIES["revenue_estimated"] = QUERIES["revenue_by_customer"]
QUERIES["customer_revenue_estimated"] = QUERIES["customer_revenue"]
QUERIES["extremes_estimated"] = (
    "select customer_id, count(*) as orders, min(amount) as smallest, max(amount) as largest\n"
    "from {orders} group by customer_id"
)
CONFIGS = {
    "revenue_estimated": ", rebuild_min_bytes=0",
    "extremes_estimated": ", rebuild_min_bytes=0",
    "customer_revenue_estimated": ", rebuild_min_bytes=0",
}
ESTIMATED = ("revenue_estimated", "extremes_estimated", "customer_revenue_estimated")
RECOMPUTED = "recomputing groups from the whole input"


def model(name: str) -> str:
    config = f"{{{{ config(materialized='materialized_view'{CONFIGS.get(name, '')}) }}}}\n"
    return config + QUERIES[name].format(**SOURCE_REFS)


class TestMaterializedViews(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        views = {f"{name}.sql": model(name) for name in QUERIES}
        return {"sources.yml": SOURCES, **UPSTREAM, **views}

    def test_refreshes_equal_the_queries_recomputed(self, project):
        schema, sql = project.test_schema, project.run_sql
        columns = "id int, customer_id int, status string, amount double"
        sql(f"create table {schema}.orders ({columns}) {CDF}")
        sql(f"create table {schema}.customers (id int, region string) {CDF}")
        sql(f"insert into {schema}.customers values (1, 'north'), (2, 'south'), (3, null)")
        sql(
            f"insert into {schema}.orders values (10, 1, 'paid', 5.0), (11, 1, 'new', 7.5), "
            "(12, 2, 'paid', 3.25), (13, 3, 'cancelled', 9.0), (14, 3, 'paid', null)"
        )
        _, first = run_dbt_and_capture(["run"])
        assert first.count("OK, built from its sources' current rows") == 10
        assert "OK, refreshed fully: a window function at line 3" in first
        self.check_all(project)

        sql(f"update {schema}.orders set amount = 1.0 where id = 12")  # a new minimum
        sql(f"delete from {schema}.orders where id = 10")  # customer 1's minimum leaves
        sql(f"insert into {schema}.orders values (15, 2, 'new', 2.5), (16, 4, 'paid', 1.0)")
        sql(f"update {schema}.customers set region = 'east' where id = 2")  # a joined row
        sql(f"insert into {schema}.customers values (4, 'north')")
        said = messages(run_dbt(["run"]))
        second = "\n".join(f" {name} OK {line}" for name, line in said.items())
        assert "OK, refreshed incrementally: " in second and "groups changed" in second
        assert said["paid_by_customer"].startswith("OK, refreshed incrementally: 3 groups "), said
        assert said["copied_statuses"] == (
            f"OK, refreshed fully: it reads {schema}.order_copy, a table model, which dbt "
            "replaces at each run (a view, ephemeral or stream_incremental model in its place "
            "is followed)"
        )
        assert said["podium"] == (
            f"OK, refreshed fully: it reads {schema}.ranked, a materialized view that refreshes "
            "fully, replacing its table at each run"
        )
        for name in ESTIMATED:
            estimated = next(
                line for line in second.splitlines() if f" {name} " in line and " OK " in line
            )
            assert "OK, refreshed fully: the change would scan " in estimated, estimated
            assert RECOMPUTED in estimated, estimated
        self.check_all(project)

        sql(f"delete from {schema}.orders where customer_id = 2")  # a group disappears
        sql(f"delete from {schema}.customers where id = 3")
        run_dbt(["run"])
        self.check_all(project)
        offsets = dict(
            sql(
                f"select name, offset_version from {schema}.dbt_streams "
                "where name like 'revenue_by_customer@%'",
                fetch="all",
            )
        )
        assert offsets == {
            f"revenue_by_customer@{schema}.orders": latest_version(project, "orders"),
            f"revenue_by_customer@{schema}.customers": latest_version(project, "customers"),
        }

        _, idle = run_dbt_and_capture(["run", "-s", "revenue_by_customer"])
        assert "no pending changes" in idle

        sql(f"insert into {schema}.orders values (17, 1, 'paid', 4.0)")
        explained = explain(project, "revenue_by_customer")
        assert explained[0] == (
            "revenue_by_customer (materialized_view; incremental: its aggregates are kept from "
            "the change, and a group whose MIN or MAX may have been deleted is recomputed)"
        )
        assert explained[1].startswith("stream revenue_by_customer on view ")
        assert any("path: incremental" in line for line in explained), explained
        extremes = explain(project, "extremes_estimated")
        assert extremes[0] == (
            "extremes_estimated (materialized_view; incremental: its aggregates are kept from "
            "the change, and a group whose MIN or MAX may have been deleted is recomputed)"
        )
        assert any("path: rebuild (the change would scan " in line and RECOMPUTED in line
                   for line in extremes), extremes  # fmt: skip
        joined = explain(project, "customer_revenue")
        assert joined[0] == (
            "customer_revenue (materialized_view; incremental: the groups each table's change "
            "may touch are recomputed)"
        )
        assert joined[1:3] == [
            f"stream customer_revenue@{schema}.{table} on delta `{schema}`.`{table}`: "
            f"incremental (reads its changes after version {latest_version(project, table) - v})"
            for table, v in (("customers", 0), ("orders", 1))
        ]
        assert joined[3].startswith("  path: incremental (its tables hold "), joined
        assert joined[3].endswith("under the model's rebuild_min_bytes of 32.0 MiB)"), joined
        estimated = explain(project, "customer_revenue_estimated")
        assert estimated[3].startswith("  path: rebuild (the change would scan "), estimated
        assert RECOMPUTED in estimated[3], estimated

    def test_a_changed_definition_rebuilds(self, project):
        changed = QUERIES["totals"].replace(
            "count(*) as orders", "count(*) as orders, max(id) as last"
        )
        path = Path(project.project_root) / "models" / "totals.sql"
        path.write_text(
            "{{ config(materialized='materialized_view') }}\n" + changed.format(**SOURCE_REFS)
        )
        _, output = run_dbt_and_capture(["run", "-s", "totals"])
        assert "OK, built from its sources' current rows" in output
        self.check(project, "totals", changed)

    def test_a_changed_configuration_follows_on_configuration_change(self, project):
        path = Path(project.project_root) / "models" / "regions.sql"
        query = QUERIES["regions"].format(**SOURCE_REFS)

        def configured(on_change: str) -> str:
            path.write_text(
                "{{ config(materialized='materialized_view', tblproperties={'team': 'sales'}, "
                f"on_configuration_change='{on_change}') }}}}\n{query}"
            )
            return on_change

        configured("fail")
        _, refused = run_dbt_and_capture(["run", "-s", "regions"], expect_pass=False)
        assert "on_configuration_change is 'fail', so nothing was written" in refused
        configured("continue")
        _, continued = run_dbt_and_capture(["run", "-s", "regions"])
        assert "on_configuration_change is 'continue', so it refreshes the table" in continued
        built = self.properties(project, "regions")
        assert "team" not in built and built["delta.enableDeletionVectors"] == "false"
        configured("apply")
        _, applied = run_dbt_and_capture(["run", "-s", "regions"])
        assert "OK, built from its sources' current rows" in applied
        rebuilt = self.properties(project, "regions")
        assert rebuilt["team"] == "sales" and rebuilt["delta.enableDeletionVectors"] == "false"
        self.check(project, "regions")

    @staticmethod
    def properties(project, table: str) -> dict[str, str]:
        rows = project.run_sql(f"show tblproperties {project.test_schema}.{table}", fetch="all")
        return {row[0]: row[1] for row in rows}

    def test_refresh_incremental_refuses_what_would_refresh_fully(self, project):
        path = Path(project.project_root) / "models" / "ranked.sql"
        strict = "{{ config(materialized='materialized_view', refresh='incremental') }}\n"
        path.write_text(strict + QUERIES["ranked"].format(**SOURCE_REFS))
        before = project.run_sql(f"describe history {project.test_schema}.ranked", fetch="all")
        _, output = run_dbt_and_capture(["run", "-s", "ranked"], expect_pass=False)
        assert (
            "Model ranked cannot refresh incrementally: a window function at line 3. Rewrite "
            "that part of its query, or set refresh: 'auto' to refresh it fully when it runs."
        ) in " ".join(output.split())
        after = project.run_sql(f"describe history {project.test_schema}.ranked", fetch="all")
        assert len(after) == len(before)  # nothing written

    def check_all(self, project) -> None:
        for name in QUERIES:
            self.check(project, name)

    def check(self, project, name: str, query: str | None = None) -> None:
        """The target's own columns (not the kept state's) equal its query, recomputed."""
        schema = project.test_schema
        tables = {table: f"{schema}.{table}" for table in SOURCE_REFS}
        tables["paid_orders"] = f"(select * from {schema}.orders where status = 'paid')"
        query = (query or QUERIES[name]).format(**tables)
        described = project.run_sql(f"describe {schema}.{name}", fetch="all")
        own = [row[0] for row in described if row[0] and not row[0].startswith(("_mv_", "#"))]
        shown = ", ".join(f"`{column}`" for column in own)
        target = project.run_sql(f"select {shown} from {schema}.{name}", fetch="all")
        got = sorted(map(rounded, target), key=str)
        want = sorted(map(rounded, project.run_sql(query, fetch="all")), key=str)
        assert got == want, name


def rounded(row) -> tuple:
    """Sums kept by adding deltas round differently from sums recomputed: 9 digits."""
    return tuple(round(v, 9) if isinstance(v, float) else v for v in row)


def explain(project, model: str) -> list[str]:
    """explain_stream's lines for `model` (a run-operation prints them bare)."""
    _, output = run_dbt_and_capture(
        ["run-operation", "explain_stream", "--args", f"{{model: {model}}}"]
    )
    lines = [line.split("  ", 1)[-1] if "\x1b" in line else line for line in output.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{model} ("))
    return [line for line in lines[start:] if line and not line.startswith("\x1b")]
