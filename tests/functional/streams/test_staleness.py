"""Stale streams fail before anything is written; renames do not break streams; retention.

Each consumer mirrors its own source, and the sources go stale in every way Delta allows.
"""

import time

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import DeltaProject, run_in_one_session, shown_streams

CASES = ("short", "feed", "recreated", "replaced", "renamed", "soon", "extended")

SOURCES = """
version: 2
sources:
  - name: shop
    schema: "{{ target.schema }}"
    tables:
      - {name: short}
      - {name: feed}
      - {name: recreated}
      - {name: replaced}
      - {name: renamed, identifier: "{{ var('renamed_to', 'renamed') }}"}
      - {name: soon}
      - {name: extended}
"""

MIRROR = """
{{{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
            unique_key='id', max_data_extension_time={days}) }}}}
select id, v, metadata_action, metadata_isupdate from {{{{ stream(source('shop', '{case}')) }}}}
"""

FRESHNESS_TESTS = """
version: 2
models:
  - name: short_mirror
    data_tests: [stream_fresh]
  - name: soon_mirror
    data_tests:
      - stream_fresh:
          arguments: {warn_after_hours: 24, error_after_hours: 6}
  - name: renamed_mirror
    data_tests:
      - stream_fresh:
          arguments: {error_after_hours: 1}
"""

RETENTION = {"short": "interval 2 seconds", "soon": "interval 12 hours"}


def rows(project, table: str) -> list[tuple]:
    result = project.run_sql(f"select id, v from {project.test_schema}.{table} order by id", "all")
    return [tuple(row) for row in result]


def offsets(project) -> dict[str, int]:
    result = project.run_sql(
        f"select name, offset_version from {project.test_schema}.dbt_streams", fetch="all"
    )
    return {name: version for name, version in result}


def create_source(project, case: str, how: str = "create table") -> None:
    """The source with its two rows, in one commit."""
    retention = RETENTION.get(case)
    properties = f" tblproperties (delta.deletedFileRetentionDuration = '{retention}')"
    project.run_sql(
        f"{how} {project.test_schema}.{case} using delta"
        + (properties if retention else "")
        + " as select * from values (1, 'a'), (2, 'b') as rows(id, v)"
    )


def vacuum_everything(project, table: str) -> None:
    run_in_one_session(
        project,
        "set spark.databricks.delta.retentionDurationCheck.enabled = false",
        f"vacuum {project.test_schema}.{table} retain 0 hours",
    )


class TestStaleness(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        models = {"sources.yml": SOURCES}
        for case in CASES:
            days = 14 if case == "extended" else 0
            models[f"{case}_mirror.sql"] = MIRROR.format(case=case, days=days)
        models["freshness.yml"] = FRESHNESS_TESTS
        return models

    def test_stale_streams(self, project, capsys):
        schema = project.test_schema
        for case in CASES:
            create_source(project, case)
        _, first_log = run_dbt_and_capture(["run"])
        assert (
            f"`{schema}`.`extended`: delta.deletedFileRetentionDuration raised from 7 days to "
            "14 days" in first_log
        )
        assert "`short`: delta" not in first_log
        built = offsets(project)

        for case in CASES:
            project.run_sql(f"update {schema}.{case} set v = 'changed' where id = 1")
        project.run_sql(
            f"alter table {schema}.feed set tblproperties (delta.enableChangeDataFeed = false)"
        )
        project.run_sql(f"drop table {schema}.recreated")
        create_source(project, "recreated")
        create_source(project, "replaced", how="create or replace table")
        project.run_sql(f"alter table {schema}.renamed rename to {schema}.renamed_later")

        time.sleep(3)
        vacuum_everything(project, "short")

        results, log = run_dbt_and_capture(
            ["run", "--vars", "{renamed_to: renamed_later}"], expect_pass=False
        )
        messages = {result.node.name: result.message for result in results.results}
        status = {result.node.name: str(result.status) for result in results.results}
        assert messages["renamed_mirror"].startswith("OK, consumed renamed_mirror__renamed: ")
        assert status == {
            "short_mirror": "error",
            "feed_mirror": "error",
            "recreated_mirror": "error",
            "replaced_mirror": "error",
            "renamed_mirror": "success",
            "soon_mirror": "success",
            "extended_mirror": "success",
        }
        assert (
            "Stream short_mirror__short is stale: its oldest unread change (version "
            in (messages["short_mirror"])
        )
        assert "delta.deletedFileRetentionDuration (2 seconds)" in messages["short_mirror"]
        assert (
            f"Its offset is version {built['short_mirror__short']} of `{schema}`.`short`"
            in messages["short_mirror"]
        )
        assert "--full-refresh" in messages["short_mirror"]
        assert "Change Data Feed was turned off after its offset" in messages["feed_mirror"]
        for case in ("recreated", "replaced"):
            assert (
                f"Stream {case}_mirror__{case} is stale: its source" in messages[f"{case}_mirror"]
            )
            assert "dropped and recreated or replaced" in messages[f"{case}_mirror"]
        assert "Stream soon_mirror__soon goes stale at" in log

        now = offsets(project)
        for case in ("short", "feed", "recreated", "replaced"):
            assert rows(project, f"{case}_mirror") == [(1, "a"), (2, "b")]
            assert now[f"{case}_mirror__{case}"] == built[f"{case}_mirror__{case}"]
        assert rows(project, "renamed_mirror") == [(1, "changed"), (2, "b")]
        assert now["renamed_mirror__renamed"] > built["renamed_mirror__renamed"]

        capsys.readouterr()
        run_dbt(["run-operation", "show_streams", "--args", "{format: json}"])
        shown = shown_streams(capsys.readouterr().out)
        assert shown["short_mirror__short"]["stale"] is True
        assert shown["recreated_mirror__recreated"]["stale"] is True
        assert shown["renamed_mirror__renamed"]["stale"] is False
        assert shown["renamed_mirror__renamed"]["stale_after"] is None

        # stream_fresh: short is stale (an error), soon goes stale within a day (a warning:
        # 12 hours' retention, a change pending), renamed has nothing pending (passes).
        project.run_sql(f"update {schema}.soon set v = 'again' where id = 2")
        tested = run_dbt(["test"], expect_pass=False)
        verdicts = {r.node.attached_node.split(".")[-1]: str(r.status) for r in tested}
        assert verdicts == {
            "short_mirror": "fail",
            "soon_mirror": "warn",
            "renamed_mirror": "pass",
        }

        run_dbt(["run", "--full-refresh", "--select", "short_mirror", "replaced_mirror"])
        assert rows(project, "short_mirror") == [(1, "changed"), (2, "b")]
        assert rows(project, "replaced_mirror") == [(1, "a"), (2, "b")]
