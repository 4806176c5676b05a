"""Materialized views under random queries and changes, built by dbt on Spark (hypothesis).

The property tests on SQLite (tests/unit/mv/) check the refresh's SQL against the query on
thousands of draws; this runs a few of the same draws where users run them: each example is a
query of either grammar (aggregates over a fact table, or over its outer join with a
dimension) on fresh Delta tables, built as a materialized view, then two batches of random
inserts, updates and deletes on both tables, each followed by a build (with `key_ranges=true`
in half the draws: a recompute reads through an integer group key's ranges in the change).
After every build the table's own columns equal the query run by Spark (sums of doubles to
nine decimals).

`make fuzz` runs MV_FUZZ_EXAMPLES examples (`make test` none: its functional test covers each
construct once).
"""

import itertools
import os
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from tests.functional.delta import DeltaProject
from tests.unit.mv.test_joined_refresh import dims
from tests.unit.mv.test_joined_refresh import queries as joined_queries
from tests.unit.mv.test_refresh_algebra import queries as grouped_queries
from tests.unit.mv.test_refresh_algebra import rows

EXAMPLES = int(os.environ.get("MV_FUZZ_EXAMPLES", "0"))
EXAMPLE = itertools.count()
CDF = "using delta tblproperties (delta.enableChangeDataFeed = true)"
SOURCES = """version: 2
sources:
  - name: fz
    schema: "{{ target.schema }}"
    tables:
      - {name: src, identifier: "{{ var('src', 'src') }}"}
      - {name: dim, identifier: "{{ var('dim', 'dim') }}"}
"""
changes = st.lists(
    st.tuples(st.sampled_from(["src", "dim"]), st.sampled_from(["insert", "update", "delete"]),
              st.integers(0, 7), rows, dims),
    min_size=1,
    max_size=6,
)  # fmt: skip


def literal(value: object) -> str:
    if value is None:
        return "null"
    return f"'{value}'" if isinstance(value, str) else repr(value)


def values(row: tuple) -> str:
    return ", ".join(literal(v) for v in row)


@pytest.mark.skipif(EXAMPLES == 0, reason="make fuzz runs it (MV_FUZZ_EXAMPLES)")
class TestMaterializedViewFuzz(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES}

    @settings(max_examples=max(EXAMPLES, 1), deadline=None, phases=[Phase.generate])
    @given(
        query=st.one_of(grouped_queries(), joined_queries()),
        facts=st.lists(rows, max_size=8),
        dimension=st.lists(dims, max_size=4),
        batches=st.lists(changes, min_size=2, max_size=2),
        ranged=st.booleans(),
    )
    def test_a_built_view_equals_its_query(
        self, project, query, facts, dimension, batches, ranged
    ):
        n = next(EXAMPLE)
        schema, sql = project.test_schema, project.run_sql
        tables = {"src": f"src_{n}", "dim": f"dim_{n}"}
        facts_columns = "id int, g int, h string, x int, y double"
        sql(f"create table {schema}.{tables['src']} ({facts_columns}) {CDF}")
        sql(f"create table {schema}.{tables['dim']} (id int, g int, region string) {CDF}")
        for table, initial in (("src", facts), ("dim", dimension)):
            if initial:
                listed = ", ".join(f"({i}, {values(row)})" for i, row in enumerate(initial))
                sql(f"insert into {schema}.{tables[table]} values {listed}")
        model = f"mv_{n}"
        text = query.replace("from src s", "from {{ source('fz', 'src') }} s").replace(
            "join dim d", "join {{ source('fz', 'dim') }} d"
        )
        path = Path(project.project_root) / "models" / f"{model}.sql"
        ranges = ", key_ranges=true" if ranged else ""  # a recompute through its key's ranges
        path.write_text(f"{{{{ config(materialized='materialized_view'{ranges}) }}}}\n" + text)
        build = ["run", "-s", model, "--vars", f"{{src: {tables['src']}, dim: {tables['dim']}}}"]
        run_dbt(build)
        self.check(project, model, query, tables)
        for batch in batches:
            for table, action, key, fact, dim in batch:
                row = fact if table == "src" else dim
                name = f"{schema}.{tables[table]}"
                if action == "insert":
                    sql(f"insert into {name} values ({100 + key}, {values(row)})")
                elif action == "delete":
                    sql(f"delete from {name} where id % 8 = {key}")
                else:
                    columns = ("g", "h", "x", "y") if table == "src" else ("g", "region")
                    sets = ", ".join(
                        f"{c} = {literal(v)}" for c, v in zip(columns, row, strict=True)
                    )
                    sql(f"update {name} set {sets} where id % 8 = {key}")
            run_dbt(build)
            self.check(project, model, query, tables)
        path.unlink()

    @staticmethod
    def check(project, model: str, query: str, tables: dict[str, str]) -> None:
        schema = project.test_schema
        spark_query = query.replace("from src s", f"from {schema}.{tables['src']} s").replace(
            "join dim d", f"join {schema}.{tables['dim']} d"
        )
        described = project.run_sql(f"describe {schema}.{model}", fetch="all")
        own = [row[0] for row in described if row[0] and not row[0].startswith(("_mv_", "#"))]
        shown = ", ".join(f"`{column}`" for column in own)
        got = project.run_sql(f"select {shown} from {schema}.{model}", fetch="all")
        want = project.run_sql(spark_query, fetch="all")
        key = str
        assert sorted(map(rounded, got), key=key) == sorted(map(rounded, want), key=key), query


def rounded(row) -> tuple:
    return tuple(round(v, 9) if isinstance(v, float) else v for v in row)
