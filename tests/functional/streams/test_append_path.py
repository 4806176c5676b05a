"""A mirror of a source that only gained rows since its offset is written by an INSERT, not a
MERGE (streams/appends.py): blind appends, and commits that change no row (OPTIMIZE, table
properties), take the INSERT; an update, a delete, an overwrite or a new stream take the
MERGE. After every build the mirror equals its source, a deleted key appended again included.
"""

from pathlib import Path

from dbt.tests.util import run_dbt

from tests.functional.adapter.delta import DeltaProject, sources_yml

MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select id, v, metadata_action, metadata_isupdate from {{ stream(source('shop', 'items')) }}
"""


class TestAppendPath(DeltaProject):
    def test_appends_are_inserted_and_the_rest_merged(self, project):
        schema, sql = project.test_schema, project.run_sql
        items = f"{schema}.items"
        sql(f"create table {items} (id int, v string) using delta "
            "tblproperties (delta.enableChangeDataFeed = true)")  # fmt: skip
        sql(f"insert into {items} values (1, 'a'), (2, 'b')")
        models = Path(project.project_root) / "models"
        (models / "sources.yml").write_text(sources_yml("shop", "items"))
        (models / "mirror.sql").write_text(MIRROR)
        run_dbt(["run"])

        rounds = [
            ("WRITE", [f"insert into {items} values (3, 'c')", f"optimize {items}",
                       f"alter table {items} set tblproperties ('team' = 'shop')"]),
            ("MERGE", [f"update {items} set v = 'a2' where id = 1"]),
            ("MERGE", [f"delete from {items} where id = 2"]),
            ("WRITE", [f"insert into {items} values (2, 'b2'), (4, 'd')"]),
            ("MERGE", [f"insert overwrite {items} select * from {items} where id <> 4"]),
            ("MERGE", [f"insert into {items} values (5, 'e')",
                       f"update {items} set v = 'c2' where id = 3"]),
        ]  # fmt: skip
        for operation, statements in rounds:
            for statement in statements:
                sql(statement)
            run_dbt(["run"])
            last = sql(f"describe history {schema}.mirror limit 1", fetch="one")[4]
            assert last == operation, statements
            assert self.rows(project, "mirror") == self.rows(project, "items"), statements

    @staticmethod
    def rows(project, table: str) -> list[tuple]:
        got = project.run_sql(f"select id, v from {project.test_schema}.{table}", fetch="all")
        return sorted(tuple(row) for row in got)
