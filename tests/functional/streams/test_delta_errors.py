"""Delta's own errors reach the user with Delta's error class and message.

Spark's error-class registry does not know Delta's classes, so asking the JVM to format one
(PySpark's `getMessage()`) fails with `[INTERNAL_ERROR] Cannot find main error class`, and
Delta errors PySpark does not convert arrive as a Py4J error with the JVM stack trace. Four
models fail in one `dbt run`: a change read past the table's latest version, a MERGE with
two source rows for one target row, a MERGE naming a column the target lacks (a Delta error
with a SQL query context: PySpark's own logging of it calls `getMessage()` and fails), and an
INSERT that breaks a CHECK constraint (a Delta error PySpark does not convert). The advice that
would lose data, left out of those messages, is captured from the running Delta's classes.
"""

import json

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject
from tests.unit.session.test_advice import DELTA_ADVICE, advice_in

CHANGES_PAST_LATEST = """
{{ config(materialized='table') }}
select * from table_changes('{{ target.schema }}.feed', 99, 100)
"""

DUPLICATE_MERGE = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select 1 as id, 'x' as v union all select 1 as id, 'y' as v
"""

UNKNOWN_MERGE_COLUMN = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',
          merge_update_columns=['nope']) }}
select 1 as id, 'x' as v
"""

CONSTRAINT_BROKEN = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select -1 as id
"""

# model name -> what its error must say
EXPECTED = {
    "changes_past_latest": "[DELTA_CDC_START_VERSION_AFTER_LATEST] Start version 99 for change "
    "data feed exceeds the latest table version 1.",
    "duplicate_merge": "[DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE] Cannot perform "
    "Merge as multiple source rows matched",
    "unknown_merge_column": "[DELTA_MERGE_UNRESOLVED_EXPRESSION] Cannot resolve ",
    "constraint_broken": "[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint positive "
    "(id > 0) violated by row with values: - id : -1",
}


class TestDeltaErrorsKeepTheirClass(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "changes_past_latest.sql": CHANGES_PAST_LATEST,
            "duplicate_merge.sql": DUPLICATE_MERGE,
            "unknown_merge_column.sql": UNKNOWN_MERGE_COLUMN,
            "constraint_broken.sql": CONSTRAINT_BROKEN,
        }

    def test_each_error_names_its_delta_class(self, project):
        schema = project.test_schema
        project.run_sql(
            f"create table {schema}.feed (id int) using delta "
            "tblproperties (delta.enableChangeDataFeed = true)"
        )
        project.run_sql(f"insert into {schema}.feed values (1)")
        for target in ("duplicate_merge", "unknown_merge_column"):
            project.run_sql(f"create table {schema}.{target} (id int, v string) using delta")
            project.run_sql(f"insert into {schema}.{target} values (1, 'a')")
        project.run_sql(f"create table {schema}.constraint_broken (id int) using delta")
        project.run_sql(
            f"alter table {schema}.constraint_broken add constraint positive check (id > 0)"
        )

        results = run_dbt(["run"], expect_pass=False)
        messages = {result.node.name: " ".join(result.message.split()) for result in results}
        for name, error in EXPECTED.items():
            assert error in messages[name], (name, messages[name])
            assert "INTERNAL_ERROR" not in messages[name], (name, messages[name])
            assert "org.apache.spark" not in messages[name], (name, messages[name])
            assert "py4j" not in messages[name].lower(), (name, messages[name])


def test_the_captured_delta_advice_is_the_running_deltas(spark) -> None:
    """The unit tests hold the advice left out against Delta's error classes as captured in
    tests/unit/session/data/delta_error_advice.json: the running Delta's classes that give such
    advice must be exactly those, with the same messages."""
    jvm = spark.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    stream = loader.getResourceAsStream("error/delta-error-classes.json")
    assert stream is not None, "the Delta jar has no error/delta-error-classes.json"
    text = jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
    running = json.loads(text)
    captured = json.loads(DELTA_ADVICE.read_text())["classes"]
    with_advice = {
        name: node["message"] for name, node in running.items() if advice_in(node["message"])
    }
    assert with_advice == captured
