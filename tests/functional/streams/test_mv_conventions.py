"""A materialized view under dbt's own commands, as for any model: an enforced contract (its
NOT NULL holds on refreshes, nothing moving), a unit test, `dbt ls`, `dbt show`, `dbt docs
generate`, `--full-refresh`, a source that is away (one sentence) and `dbt retry`, `dbt clone`
into another schema that carries on from the cloned offsets, a source replaced (one sentence,
then --full-refresh), and the model's stream dropped once the model is gone."""

import json
import shutil
from pathlib import Path

import pytest
from dbt.tests.util import rm_file, run_dbt, run_dbt_and_capture

from tests.functional.delta import WithDevTarget
from tests.functional.streams.test_dbt_edges import messages, offsets, statuses

SOURCES = """version: 2
sources:
  - name: shop
    schema: "{{ var('raw_schema') }}"
    tables: [{name: orders}]
"""
QUERY = (
    "select customer_id, count(*) as orders, sum(amount) as revenue\n"
    "from {orders}\ngroup by customer_id"
)
REVENUE = "{{ config(materialized='materialized_view') }}\n" + QUERY.format(
    orders="{{ source('shop', 'orders') }}"
)
SCHEMA_YML = """version: 2
models:
  - name: revenue
    config:
      contract: {enforced: true}
    columns:
      - {name: customer_id, data_type: int, constraints: [{type: not_null}]}
      - {name: orders, data_type: bigint}
      - {name: revenue, data_type: double}
unit_tests:
  - name: revenue_adds_up
    model: revenue
    given:
      - input: source('shop', 'orders')
        rows:
          - {id: 1, customer_id: 7, amount: 2.5}
          - {id: 2, customer_id: 7, amount: 1.5}
          - {id: 3, customer_id: 8, amount: 4.0}
    expect:
      rows:
        - {customer_id: 7, orders: 2, revenue: 4.0}
        - {customer_id: 8, orders: 1, revenue: 4.0}
"""
AWAY = (
    "Stream revenue: view {schema}.revenue__mv_input reads {schema}.orders, which is not there "
    "(dropped or renamed). Restore it (its stream carries on from its offset if it is the same "
    "table), or change the query that reads it."
)


class TestMaterializedViewConventions(WithDevTarget):
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, "revenue.sql": REVENUE, "schema.yml": SCHEMA_YML}

    def test_dbt_commands_on_a_materialized_view(self, project, dev_schema, capsys):
        schema, sql = project.test_schema, project.run_sql
        sql(f"create table {schema}.orders (id int, customer_id int, amount double) using delta")
        sql(f"insert into {schema}.orders values (1, 1, 5.0), (2, 1, 2.0), (3, 2, 3.0)")
        built = run_dbt(["build"])
        assert statuses(built) == {"revenue": "success", "revenue_adds_up": "pass"}
        self.check(project, schema)

        selected = ["-s", "config.materialized:materialized_view", "--resource-type", "model"]
        listed = run_dbt(["ls", *selected, "--output", "name"])
        assert listed == ["revenue"]
        shown = run_dbt(["show", "-s", "revenue", "--limit", "5"])
        assert sorted(tuple(r) for r in shown.results[0].agate_table.rows) == [
            (1, 2, 7.0),
            (2, 1, 3.0),
        ]
        run_dbt(["docs", "generate"])
        catalog = json.loads((Path(project.project_root) / "target" / "catalog.json").read_text())
        columns = catalog["nodes"]["model.test.revenue"]["columns"]
        assert {"customer_id", "orders", "revenue"} <= set(columns)

        # The contract holds on refreshes: a NULL customer breaks its NOT NULL, nothing moves.
        sql(f"insert into {schema}.orders values (4, null, 1.0)")
        before = offsets(project, schema)
        refused = run_dbt(["run"], expect_pass=False)
        violated = "NOT NULL constraint violated for column: customer_id"
        assert violated in messages(refused)["revenue"]
        assert offsets(project, schema) == before
        sql(f"delete from {schema}.orders where id = 4")

        # A source away: one sentence; `dbt retry` builds it once it is back.
        sql(f"insert into {schema}.orders values (5, 2, 1.0)")
        sql(f"alter table {schema}.orders rename to {schema}.orders_away")
        failed = run_dbt(["run"], expect_pass=False)
        assert AWAY.format(schema=schema) in " ".join(messages(failed)["revenue"].split())
        sql(f"alter table {schema}.orders_away rename to {schema}.orders")
        retried = run_dbt(["retry"])
        assert messages(retried)["revenue"].startswith("OK, refreshed incrementally: ")
        self.check(project, schema)

        # --full-refresh recomputes from the sources' current rows.
        sql(f"update {schema}.orders set amount = 9.0 where id = 1")
        _, output = run_dbt_and_capture(["run", "--full-refresh"])
        assert "OK, built from its sources' current rows" in output
        self.check(project, schema)

        # dbt clone into dev; dev's refresh carries on from the cloned offsets.
        state = Path(project.project_root) / "state"
        state.mkdir()
        shutil.copy(Path(project.project_root) / "target" / "manifest.json", state)
        project.create_test_schema(dev_schema)
        run_dbt(["clone", "--state", str(state), "--target", "dev"])
        sql(f"insert into {schema}.orders values (6, 3, 4.0)")
        for target in ("dev", "default"):
            refreshed = run_dbt(["run", "--target", target])
            said = messages(refreshed)["revenue"]
            assert said.startswith("OK, refreshed incrementally: 1 group changed; "), said
            self.check(project, dev_schema if target == "dev" else schema)

        # The source replaced (dropped and created again): the refresh says so and what to do.
        sql(f"drop table {schema}.orders")
        sql(f"create table {schema}.orders (id int, customer_id int, amount double) using delta")
        sql(f"insert into {schema}.orders values (7, 1, 1.0)")
        replaced = run_dbt(["run"], expect_pass=False)
        said = " ".join(messages(replaced)["revenue"].split())
        assert (
            f"Stream revenue@{schema}.orders is stale: its source `{schema}`.`orders` was dropped "
            "and recreated or replaced (table id "
        ) in said
        assert said.endswith("Rebuild with --full-refresh to recreate the stream.")
        run_dbt(["run", "--full-refresh"])
        self.check(project, schema)

        # The model gone: its stream is dropped with drop_stream, the source untouched.
        rm_file(Path(project.project_root) / "models" / "revenue.sql")
        rm_file(Path(project.project_root) / "models" / "schema.yml")
        capsys.readouterr()
        run_dbt(["run-operation", "drop_stream", "--args", "{name: revenue}"])
        assert "Dropped stream revenue" in capsys.readouterr().out
        assert not [name for name in offsets(project, schema) if name.startswith("revenue")]

    @staticmethod
    def check(project, schema: str) -> None:
        """The target's own columns equal the query over the source, recomputed."""
        got = project.run_sql(
            f"select customer_id, orders, revenue from {schema}.revenue order by 1", fetch="all"
        )
        query = QUERY.format(orders=f"{project.test_schema}.orders") + " order by 1"
        assert [tuple(r) for r in got] == [tuple(r) for r in project.run_sql(query, fetch="all")]
