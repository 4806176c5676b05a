"""on_schema_change for a column added to a stream's source, as dbt's incremental does it."""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, sources_yml

SOURCES = sources_yml("shop", "customers")

MIRROR = """
{{{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
            unique_key='id', on_schema_change='{setting}') }}}}
select * from {{{{ stream(source('shop', 'customers')) }}}}
"""

SETTINGS = ("ignore", "append_new_columns", "sync_all_columns", "fail")


def rows(project, table: str) -> list[tuple]:
    result = project.run_sql(f"select * from {project.test_schema}.{table} order by id", "all")
    return [tuple(row) for row in result]


def columns(project, table: str) -> list[str]:
    result = project.run_sql(f"select * from {project.test_schema}.{table} limit 0", "all")
    described = project.run_sql(f"describe table {project.test_schema}.{table}", "all")
    assert result == []
    return [row[0] for row in described if row[0] and not row[0].startswith("#")]


def offset(project, model: str) -> int:
    [(version,)] = project.run_sql(
        f"select offset_version from {project.test_schema}.dbt_streams "
        f"where name = '{model}__customers'",
        fetch="all",
    )
    return version


class TestColumnAddedToSource(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        models = {"sources.yml": SOURCES}
        for setting in SETTINGS:
            models[f"mirror_{setting}.sql"] = MIRROR.format(setting=setting)
        return models

    def test_each_setting(self, project):
        schema = project.test_schema
        project.run_sql(f"create table {schema}.customers (id int, name string) using delta")
        project.run_sql(f"insert into {schema}.customers values (1, 'Ann'), (2, 'Bob')")
        run_dbt(["run"])
        fail_offset = offset(project, "mirror_fail")

        project.run_sql(f"alter table {schema}.customers add columns (email string)")
        project.run_sql(f"insert into {schema}.customers values (3, 'Cy', 'cy@example.com')")
        project.run_sql(f"update {schema}.customers set name = 'Bo' where id = 2")
        results = run_dbt(["run"], expect_pass=False)
        status = {result.node.name: str(result.status) for result in results.results}
        assert status == {
            "mirror_ignore": "success",
            "mirror_append_new_columns": "success",
            "mirror_sync_all_columns": "success",
            "mirror_fail": "error",
        }

        assert columns(project, "mirror_ignore") == ["id", "name"]
        assert rows(project, "mirror_ignore") == [(1, "Ann"), (2, "Bo"), (3, "Cy")]
        for synced in ("mirror_append_new_columns", "mirror_sync_all_columns"):
            assert columns(project, synced) == ["id", "name", "email"]
            assert rows(project, synced) == [
                (1, "Ann", None),
                (2, "Bo", None),
                (3, "Cy", "cy@example.com"),
            ]
        [failed] = [result for result in results.results if result.node.name == "mirror_fail"]
        assert "on_schema_change" in failed.message
        assert columns(project, "mirror_fail") == ["id", "name"]
        assert rows(project, "mirror_fail") == [(1, "Ann"), (2, "Bob")]
        assert offset(project, "mirror_fail") == fail_offset
