"""Names that need quoting work end to end; names Spark or Delta cannot handle are refused.

The source is a table named with a reserved word whose columns hold a reserved word, a quote
and a label of DESCRIBE's own rows; the stream's name holds quotes, backticks and SQL
punctuation. None of it may ever run as SQL text. Spark refuses table names with spaces, and
Delta cannot write change data for columns with backticks, so streams refuse those with a
clear error.
"""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject

STREAM = "o'brien `stream`; drop table x --"

SOURCES = """
version: 2
sources:
  - name: odd
    schema: "{{ target.schema }}"
    tables:
      - {name: select}
      - {name: bad_name, identifier: "my table"}
      - {name: ticked}
"""

MIRROR = f"""
{{{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
            unique_key='group') }}}}
select * from {{{{ stream(source('odd', 'select'), name="{STREAM}") }}}}
"""

PEEK = f"""
{{{{ config(materialized='table') }}}}
select * from {{{{ stream(source('odd', 'select'), name="{STREAM}", unique_key='group') }}}}
"""

BAD = """
{{{{ config(materialized='stream_incremental', incremental_strategy='append') }}}}
select * from {{{{ stream(source('odd', '{source}')) }}}}
"""

# `Provider` is also a row label of DESCRIBE TABLE EXTENDED, which the adapter reads.
COLUMNS = "`group`, `it's`, `Provider`"


class TestNamesThatNeedQuoting(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES,
            "mirror.sql": MIRROR,
            "peek.sql": PEEK,
            "bad.sql": BAD.format(source="bad_name"),
            "ticked.sql": BAD.format(source="ticked"),
        }

    def test_quoted_names(self, project):
        schema = project.test_schema
        run = project.run_sql
        run(f"create table {schema}.`select` ({COLUMNS.replace(',', ' string,')} int) using delta")
        run(f"insert into {schema}.`select` values ('a', 'x', 1), ('b', 'y', 2)")
        run_dbt(["run", "--select", "mirror"])
        run(f"update {schema}.`select` set `it's` = 'z' where `group` = 'a'")
        run(f"insert into {schema}.`select` values ('c', 'w', 4)")

        run_dbt(["run", "--select", "peek"])
        peek = run(
            f"select {COLUMNS}, metadata_action from {schema}.peek "
            "order by `group`, metadata_action",
            fetch="all",
        )
        assert [tuple(row) for row in peek] == [
            ("a", "x", 1, "DELETE"),
            ("a", "z", 1, "INSERT"),
            ("c", "w", 4, "INSERT"),
        ]

        run_dbt(["run", "--select", "mirror"])
        mirror = run(f"select {COLUMNS} from {schema}.mirror order by `group`", fetch="all")
        source = run(f"select {COLUMNS} from {schema}.`select` order by `group`", fetch="all")
        assert [tuple(r) for r in mirror] == [tuple(r) for r in source]
        [(name, key)] = run(f"select name, unique_key from {schema}.dbt_streams", fetch="all")
        assert (name, key) == (STREAM, '["group"]')

    def test_a_name_spark_cannot_store_is_refused(self, project):
        """Spark refuses `my table` as a name, so no such table exists to stream from."""
        results = run_dbt(["run", "--select", "bad"], expect_pass=False)
        assert "Stream bad__bad_name: cannot read source" in results.results[0].message
        assert "Check that the table exists" in results.results[0].message

    def test_a_column_with_a_backtick_is_refused(self, project):
        project.run_sql(
            f"create table {project.test_schema}.ticked (`back``tick` int) using delta"
        )
        results = run_dbt(["run", "--select", "ticked"], expect_pass=False)
        message = " ".join(results.results[0].message.split())
        assert "Stream ticked__ticked: column 'back`tick' of source" in message
        assert "contains a backtick" in message
        assert "Rename the column." in message
