"""unique_key names a source column case-insensitively, as Spark resolves names.

The source's column is `id`; the models key on `ID`. The key is taken in the source's
spelling before anything uses it, because the row id hashes the key's name with its value:
a stream keyed `ID` must give the same row ids as one keyed `id`. A mirror (`apply_changes`)
and a `merge` target keyed `ID` must write through the materialization's quoted `ID`.
"""

import json

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, sources_yml

SOURCES = sources_yml("club", "members")

MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='ID') }}
select id, name, metadata_action, metadata_isupdate from {{ stream(source('club', 'members')) }}
"""

UPSERTS = """
{{ config(materialized='stream_incremental', incremental_strategy='merge', unique_key='ID') }}
select id, name from {{ stream(source('club', 'members')) }} where metadata_action = 'INSERT'
"""


def append_log(key: str) -> str:
    """An append-only log of every change of a stream keyed `key`."""
    return (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        f"select * from {{{{ stream(source('club', 'members'), unique_key='{key}') }}}}\n"
    )


LOG_COLUMNS = "id, name, metadata_action, metadata_isupdate, metadata_row_id"


def rows(project, sql: str) -> list[tuple]:
    return [tuple(row) for row in project.run_sql(sql, fetch="all")]


class TestKeyMatchesSourceColumnInAnyCase(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES,
            "members_mirror.sql": MIRROR,
            "members_upserts.sql": UPSERTS,
            "log_upper.sql": append_log("ID"),
            "log_lower.sql": append_log("id"),
        }

    def test_mirror_and_logs_keyed_in_another_case(self, project):
        schema = project.test_schema
        project.run_sql(
            f"create table {schema}.members (id int, name string) using delta "
            "tblproperties (delta.enableChangeDataFeed = true)"
        )
        project.run_sql(f"insert into {schema}.members values (1, 'ann'), (2, 'bob'), (3, 'cy')")
        run_dbt(["run"])

        project.run_sql(f"insert into {schema}.members values (4, 'dee')")
        project.run_sql(f"update {schema}.members set name = 'ANN' where id = 1")
        project.run_sql(f"delete from {schema}.members where id = 2")
        run_dbt(["run"])

        current = [(1, "ANN"), (3, "cy"), (4, "dee")]
        assert rows(project, f"select * from {schema}.members order by id") == current
        assert rows(project, f"select * from {schema}.members_mirror order by id") == current
        upserts = rows(project, f"select * from {schema}.members_upserts order by id")
        assert upserts == [(1, "ANN"), (2, "bob"), (3, "cy"), (4, "dee")]

        order = "order by metadata_commit_version, id, metadata_action"
        upper = rows(project, f"select {LOG_COLUMNS} from {schema}.log_upper {order}")
        lower = rows(project, f"select {LOG_COLUMNS} from {schema}.log_lower {order}")
        assert upper == lower
        assert [row[:4] for row in upper] == [
            (1, "ann", "INSERT", False),
            (2, "bob", "INSERT", False),
            (3, "cy", "INSERT", False),
            (4, "dee", "INSERT", False),
            (1, "ann", "DELETE", True),
            (1, "ANN", "INSERT", True),
            (2, "bob", "DELETE", False),
        ]
        keys = rows(project, f"select name, unique_key from {schema}.dbt_streams order by name")
        assert {name: json.loads(key) for name, key in keys} == {
            "log_lower__members": ["id"],
            "log_upper__members": ["id"],
            "members_mirror__members": ["id"],
            "members_upserts__members": ["id"],
        }
