"""Schema evolution the way Delta pipelines do it: a MERGE with schema auto-merge that widens a
column or adds one, and a write with mergeSchema that adds one, made after a stream's offset
with changes before and after them. Their commits leave no trace in the history (only a
metaData action in the log); Delta refuses to read the range, and the build reads it across,
ending with each mirror equal to its source. An error Delta still raises inside a stream build
names the model and its streams."""

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.spark_streams.streams.delta.schema_changes import UNSAFE_READ
from tests.functional.delta import DeltaProject, run_in_one_session, sources_yml

SOURCES = sources_yml("shop", "merged_wide", "merged_added", "written_added", "plain")
MIRROR = """
{{{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
            unique_key='id', on_schema_change='{setting}',
            tblproperties={{'delta.enableTypeWidening': 'true'}}) }}}}
select * from {{{{ stream(source('shop', '{source}')) }}}}
"""
MODELS = {
    "sources.yml": SOURCES,
    "wide_mirror.sql": MIRROR.format(setting="sync_all_columns", source="merged_wide"),
    "added_mirror.sql": MIRROR.format(setting="append_new_columns", source="merged_added"),
    "written_mirror.sql": MIRROR.format(setting="append_new_columns", source="written_added"),
    # changes() across the widening MERGE: read-only, run in the model's own statement.
    "wide_changes.sql": "{{ config(materialized='table') }}\nselect id, v from "
    "{{ changes(source('shop', 'merged_wide'), at={'version': 0}, unique_key='id') }}",
    # An error Delta still raises inside a stream build: an update to an append-only target.
    "append_only_mirror.sql": MIRROR.replace("enableTypeWidening", "appendOnly").format(
        setting="fail", source="plain"
    ),
}
PROPERTIES = "delta.enableChangeDataFeed = true, delta.enableTypeWidening = true"
# Added columns on tables with column mapping, as Delta pipelines that rename columns have them.
MAPPED = f"{PROPERTIES}, delta.columnMapping.mode = 'name'"
SOURCE_PROPERTIES = {"merged_added": MAPPED, "written_added": MAPPED}
AUTO_MERGE = "set spark.databricks.delta.schema.autoMerge.enabled = true"
UPSERT = "when matched then update set * when not matched then insert *"


def rows(project, name: str) -> list[tuple]:
    found = project.run_sql(f"select * from {project.test_schema}.{name} order by id", "all")
    return [tuple(row) for row in found]


class TestMergeSchemaEvolution(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return MODELS

    def test_merges_and_writes_that_evolve_the_schema_are_read_across(self, project, spark):
        schema = project.test_schema
        for source in ("merged_wide", "merged_added", "written_added", "plain"):
            project.run_sql(
                f"create table {schema}.{source} (id int not null, v int) using delta "
                f"tblproperties ({SOURCE_PROPERTIES.get(source, PROPERTIES)})"
            )
            project.run_sql(f"insert into {schema}.{source} values (1, 1), (2, 2)")
        run_dbt(["run"])

        for source in ("merged_wide", "merged_added", "written_added"):
            project.run_sql(f"insert into {schema}.{source} values (3, 3)")
        run_in_one_session(
            project,
            AUTO_MERGE,
            f"merge into {schema}.merged_wide t using (select 2 as id, "
            "cast(5000000000 as bigint) as v union all select 4, cast(7 as bigint)) s "
            f"on t.id = s.id {UPSERT}",
            f"merge into {schema}.merged_added t using (select 2 as id, 20 as v, 'b' as note "
            f"union all select 4, 40, 'd') s on t.id = s.id {UPSERT}",
        )
        spark.createDataFrame([(5, 50, "e")], "id int, v int, note string").write.format(
            "delta"
        ).mode("append").option("mergeSchema", "true").saveAsTable(f"{schema}.written_added")
        for source in ("merged_wide", "merged_added", "written_added", "plain"):
            project.run_sql(f"update {schema}.{source} set v = v + 100 where id = 1")
            project.run_sql(f"delete from {schema}.{source} where id = 3")

        results = {r.node.name: r for r in run_dbt(["run"], expect_pass=False)}

        assert {name: r.status for name, r in results.items()} == {
            **dict.fromkeys(
                ("wide_mirror", "added_mirror", "written_mirror", "wide_changes"), "success"
            ),
            "append_only_mirror": "error",
        }
        refused = results["append_only_mirror"].message
        assert (
            "\n  The build of append_only_mirror reading stream(s) append_only_mirror__plain "
            "failed in Delta, and nothing was written: no offset moved. Delta said: "
            "[DELTA_CANNOT_MODIFY_APPEND_ONLY]" in refused
        ), refused
        assert refused.count("DELTA_CANNOT_MODIFY_APPEND_ONLY") == 1, refused
        assert refused.count("Runtime Error") == 1, refused
        for source, mirror in (
            ("merged_wide", "wide_mirror"),
            ("merged_added", "added_mirror"),
            ("written_added", "written_mirror"),
        ):
            assert rows(project, mirror) == rows(project, source), mirror
        assert rows(project, "wide_mirror") == [(1, 101), (2, 5000000000), (4, 7)]
        assert rows(project, "wide_changes") == rows(project, "merged_wide")
        assert rows(project, "added_mirror") == [(1, 101, None), (2, 20, "b"), (4, 40, "d")]


def test_delta_still_has_the_setting_the_read_across_relies_on(spark):
    """Reading across a schema change relies on an internal setting of Delta's. A Delta that
    removed or renamed it would fail these reads with Delta's own error: this says why."""
    jvm = spark._jvm
    loader = jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader()
    # Delta registers its settings when its settings object first loads.
    jvm.java.lang.Class.forName("org.apache.spark.sql.delta.sources.DeltaSQLConf$", True, loader)
    try:
        default = spark.conf.get(UNSAFE_READ)
    except Exception as exc:  # Spark: [SQL_CONF_NOT_FOUND]
        pytest.fail(
            f"Delta no longer has {UNSAFE_READ} ({exc}). dbt-spark-streams turns it on for a "
            "build's write to read a stream's changes across a rename, a drop or a widening "
            "(streams/delta/schema_changes.py): find what replaced it in this Delta version."
        )
    assert default == "false"


FROM_START = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select id, full_name, metadata_action, metadata_isupdate
from {{ stream(source('shop', 'people'), at={'version': 0}) }}
"""


PEOPLE_CHANGES = """
{{ config(materialized='table') }}
select id, full_name, metadata_action
from {{ changes(source('shop', 'people'), at={'version': 0}, unique_key='id') }}
"""


class TestStreamStartedBeforeARename(DeltaProject):
    """A new stream started at a point before a rename, and a changes() interval from it, read
    across it as an existing stream's pending changes do (the check is the same)."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("shop", "people"),
            "from_start.sql": FROM_START,
            "people_changes.sql": PEOPLE_CHANGES,
        }

    def test_reads_its_first_changes_across_the_rename(self, project):
        people = f"{project.test_schema}.people"
        project.run_sql(
            f"create table {people} (id int, name string) using delta tblproperties "
            "(delta.enableChangeDataFeed = true, delta.columnMapping.mode = 'name')"
        )
        project.run_sql(f"insert into {people} values (1, 'Ann'), (2, 'Bob')")
        project.run_sql(f"alter table {people} rename column name to full_name")
        project.run_sql(f"update {people} set full_name = 'Bo' where id = 2")
        project.run_sql(f"insert into {people} values (3, 'Cy')")

        run_dbt(["run"])

        assert rows(project, "from_start") == [(1, "Ann"), (2, "Bo"), (3, "Cy")]
        assert rows(project, "from_start") == rows(project, "people")
        assert rows(project, "people_changes") == [
            (1, "Ann", "INSERT"),
            (2, "Bo", "INSERT"),
            (3, "Cy", "INSERT"),
        ]
