"""A target rebuilt because the estimate chose it keeps its Delta table, so the streams that
follow it keep following.

A mirror of a view that joins orders with customers rebuilds from the view when a customer
changes (the change would scan the orders whole), and a materialized view over an outer join
refreshes fully whenever a table changed. Both wrote CREATE OR REPLACE TABLE, which gives the
table a new Delta table id: a stream over either target was stale at every run after
("was dropped and recreated or replaced ... Rebuild with --full-refresh"). Their rows now
overwrite the table's rows: the table id stays, the history shows a WRITE, and the models
downstream consume the difference (the stream nets the overwrite's deletes and inserts of one
key into updates, and drops rows that did not change), equal to their upstream after each run.
"""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, sources_yml

MIRROR_COLUMNS = "id, amount, metadata_action, metadata_isupdate"
MODELS = {
    "sources.yml": sources_yml("shop", "orders", "customers"),
    "orders_weighted.sql": "{{ config(materialized='view') }}\n"
    "select o.id, o.amount * 2 + c.w as amount from {{ source('shop', 'orders') }} o "
    "join {{ source('shop', 'customers') }} c on o.id % 3 = c.cid",
    "mirror.sql": "{{ config(materialized='stream_incremental', unique_key='id', "
    "rebuild_min_bytes=0) }}\n"
    f"select {MIRROR_COLUMNS} from {{{{ stream(ref('orders_weighted'), unique_key='id') }}}}",
    "downstream.sql": "{{ config(materialized='stream_incremental', unique_key='id') }}\n"
    f"select {MIRROR_COLUMNS} from {{{{ stream(ref('mirror')) }}}}",
    "mart.sql": "{{ config(materialized='materialized_view', rebuild_min_bytes=0) }}\n"
    "select c.cid, sum(o.amount + c.w) as total from {{ source('shop', 'customers') }} c "
    "left join {{ source('shop', 'orders') }} o on o.id % 3 = c.cid group by c.cid",
    "over_mart.sql": "{{ config(materialized='stream_incremental', unique_key='cid') }}\n"
    "select cid, total, metadata_action, metadata_isupdate from {{ stream(ref('mart')) }}",
}


class TestRebuildKeepsTable(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return MODELS

    def test_streams_follow_a_rebuilt_target(self, project):
        schema = project.test_schema

        def rows(sql: str) -> set[tuple]:
            return {tuple(row) for row in project.run_sql(sql, fetch="all")}

        def table_id(name: str) -> str:
            return project.run_sql(f"describe detail {schema}.{name}", fetch="one")[1]

        project.run_sql(f"create table {schema}.orders (id int, amount int) using delta")
        project.run_sql(f"insert into {schema}.orders select id, id from range(1, 100) as r(id)")
        project.run_sql(f"create table {schema}.customers (cid int, w int) using delta")
        project.run_sql(f"insert into {schema}.customers values (0, 0), (1, 0), (2, 0)")
        run_dbt(["run"])
        ids = {name: table_id(name) for name in ("mirror", "mart")}

        for weight in (1, 2):
            project.run_sql(f"update {schema}.customers set w = {weight} where cid = 1")
            said = {r.node.name: " ".join(r.message.split()) for r in run_dbt(["run"])}

            assert said["mirror"].startswith("OK, rebuilt mirror: the change would scan"), said
            assert said["mart"].startswith("OK, refreshed fully: the change would scan"), said
            # customer 1's 33 orders changed; the other 66 rows were overwritten unchanged
            assert said["downstream"] == (
                "OK, consumed downstream__mirror: 0 inserted, 33 updated, 0 deleted"
            )
            assert said["over_mart"] == (
                "OK, consumed over_mart__mart: 0 inserted, 1 updated, 0 deleted"
            )
            assert {name: table_id(name) for name in ids} == ids
            assert rows(f"select id, amount from {schema}.downstream") == rows(
                f"select id, amount from {schema}.orders_weighted"
            )
            assert rows(f"select cid, total from {schema}.over_mart") == rows(
                f"select cid, total from {schema}.mart"
            )
            assert rows(f"select cid, total from {schema}.mart") == rows(
                f"select c.cid, sum(o.amount + c.w) from {schema}.customers c left join "
                f"{schema}.orders o on o.id % 3 = c.cid group by c.cid"
            )
        latest = project.run_sql(f"describe history {schema}.mirror limit 2", fetch="all")
        assert [row[4] for row in latest] == ["WRITE", "WRITE"]  # (version, timestamp, ...)
