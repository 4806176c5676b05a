"""A materialized view whose refresh recomputes groups (a MIN and a MAX) reads its input through
the ranges of its group key in the change (`key_ranges`; by default from 256 MiB of input), so
Delta reads only the source files that can hold the changed groups, and the estimate counts
that read instead of the whole input. The source is written in five files of ten customers;
the file of customers 40 to 49 is moved aside while the refresh runs: a refresh that read it
would fail. Without the ranges the same refresh recomputes from the whole input, which the
estimate counts, and under refresh: 'incremental' it is refused before anything is written.
A group key that a subquery in FROM renamed is ranged, and estimated, by the column it is.
"""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import DeltaProject, latest_version, sources_yml
from tests.functional.streams.test_materialized_views import explain
from tests.functional.streams.test_target_table import hidden_data_file

MODEL = """{{{{ config(materialized='materialized_view', refresh='incremental',
    rebuild_min_bytes=0, key_ranges={ranges}) }}}}
select customer, count(*) as orders, min(amount) as lowest, max(amount) as highest
from {{{{ source('shop', 'orders') }}}}
group by customer
"""

# grouped by orders' id, which the subquery names `customer` (orders' own customer is another
# column): the ranges are of orders' id
RENAMED = """{{ config(materialized='materialized_view', rebuild_min_bytes=0, key_ranges=true) }}
select customer, min(amount) as lowest
from (select id as customer, amount from {{ source('shop', 'orders') }}) as s
group by customer
"""


class TestRecomputeThroughKeyRanges(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("shop", "orders"),
            "extremes.sql": MODEL.format(ranges="true"),
            "extremes_whole.sql": MODEL.format(ranges="false"),
            "extremes_renamed.sql": RENAMED,
        }

    def test_a_deleted_extremum_reads_only_its_groups_files(self, project):
        schema, sql = project.test_schema, project.run_sql
        sql(
            f"create table {schema}.orders (id int, customer int, amount int) using delta "
            "tblproperties (delta.enableChangeDataFeed = true)"
        )
        for low in range(0, 50, 10):  # one file per ten customers, three orders each
            sql(
                f"insert into {schema}.orders select /*+ REPARTITION(1) */ id, "
                f"cast(id / 3 as int), id from range({low * 3}, {low * 3 + 30})"
            )
        run_dbt(["run"])

        sql(f"delete from {schema}.orders where id = 11")  # customer 3's highest
        sql(f"insert into {schema}.orders values (500, 5, 1)")  # customer 5's new lowest
        # explain_stream counts the same read as the build: through the ranges, or whole
        ranged = explain(project, "extremes")[-1]
        assert ranged.startswith("  path: incremental (the change would scan "), ranged
        assert "whole input" not in ranged
        whole = explain(project, "extremes_whole")[-1]
        assert whole.startswith("  path: fail, as the model's refresh is 'incremental' ("), whole
        assert whole.endswith("recomputing groups from the whole input)"), whole
        with hidden_data_file(project, "orders", key=145):  # customer 48's file
            _, log = run_dbt_and_capture(["--debug", "run", "-s", "extremes"])
        assert "OK, refreshed incrementally: 2 groups changed" in log
        assert "where (`_mv_c0` between 3 and 3 or `_mv_c0` between 5 and 5)" in log
        # two change rows, under broadcast_change_rows: the flagged groups are broadcast
        assert "_mv_r as (SELECT /*+ BROADCAST(f) */ _mv_c0 AS `customer`" in log, log
        # and their recomputed rows to the changed groups' (the change's state read twice)
        assert "select /*+ BROADCAST(r) */ j.`customer`" in log, log
        got = sql(
            f"select customer, orders, lowest, highest from {schema}.extremes "
            "where customer in (3, 5, 48) order by customer",
            fetch="all",
        )
        assert [tuple(row) for row in got] == [(3, 2, 9, 10), (5, 4, 1, 17), (48, 3, 144, 146)]
        assert offset_of(project, "extremes") == latest_version(project, "orders")

        # the whole input, counted by the estimate: refused, nothing written
        before = latest_version(project, "extremes_whole")
        _, refused = run_dbt_and_capture(["run", "-s", "extremes_whole"], expect_pass=False)
        assert "Model extremes_whole would refresh fully: the change would scan" in refused
        assert "recomputing groups from the whole input" in refused
        assert latest_version(project, "extremes_whole") == before

        # the table changes and the input's rows do not (only an id moves): the change has no
        # keys, so nothing is recomputed; neither a full refresh nor, here, a refusal
        sql(f"update {schema}.orders set id = id + 1000 where id = 0")
        _, idle = run_dbt_and_capture(["run", "-s", "extremes"])
        assert "OK, refreshed incrementally: 0 groups changed" in idle, idle
        assert offset_of(project, "extremes") == latest_version(project, "orders")

        # a key a subquery renamed: the estimate reads through the ranges of the column it is
        run_dbt(["run", "-s", "extremes_renamed"])
        sql(f"delete from {schema}.orders where id = 145")  # in the file of customers 40 to 49
        renamed = explain(project, "extremes_renamed")[-1]
        assert renamed.startswith("  path: incremental (the change would scan "), renamed
        assert "(0 B of" not in renamed, renamed  # orders' customer holds no 145
        with hidden_data_file(project, "orders", key=45):  # the file of ids 30 to 59
            _, log = run_dbt_and_capture(["run", "-s", "extremes_renamed"])
        assert "OK, refreshed incrementally: 1 group changed" in log, log
        gone = f"select count(*) from {schema}.extremes_renamed where customer = 145"
        assert sql(gone, fetch="one")[0] == 0


def offset_of(project, model: str) -> int:
    """The registry's offset of the model's table stream on orders."""
    schema = project.test_schema
    name = f"{model}@{schema}.orders"
    query = f"select offset_version from {schema}.dbt_streams where name = '{name}'"
    return project.run_sql(query, fetch="one")[0]
