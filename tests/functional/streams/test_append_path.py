"""A mirror of a source that only gained rows since its offset is written by an INSERT, not a
MERGE, and one of a source that only lost rows by a MERGE with only its delete clause
(streams/delta/appends.py): blind appends, and commits that change no row (OPTIMIZE, table
properties), take the INSERT; DELETEs (with such commits) the delete-only MERGE; an update,
an overwrite, deletes mixed with inserts, or a new stream take the full MERGE. After every
build the mirror equals its source, a deleted key appended again included.
"""

from pathlib import Path

from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, sources_yml

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
            ("MERGE deletes", [f"delete from {items} where id = 2"]),
            ("WRITE", [f"insert into {items} values (2, 'b2'), (4, 'd')"]),
            ("MERGE", [f"insert overwrite {items} select * from {items} where id <> 4"]),
            ("MERGE", [f"insert into {items} values (5, 'e')",
                       f"update {items} set v = 'c2' where id = 3"]),
            ("MERGE deletes", [f"delete from {items} where id = 5", f"optimize {items}",
                               f"delete from {items} where id > 2"]),
            ("MERGE", [f"delete from {items} where id = 1",
                       f"insert into {items} values (1, 'a3')"]),
        ]  # fmt: skip
        for operation, statements in rounds:
            for statement in statements:
                sql(statement)
            run_dbt(["run"])
            assert self.last_write(project) == operation, statements
            assert self.rows(project, "mirror") == self.rows(project, "items"), statements

    @staticmethod
    def last_write(project) -> str:
        """The mirror's last operation; a MERGE without a clause for unmatched rows is the
        delete-only one."""
        last = project.run_sql(
            f"describe history {project.test_schema}.mirror limit 1", fetch="one"
        )
        operation, parameters = last[4], last[5]
        if operation == "MERGE" and parameters["notMatchedPredicates"] == "[]":
            return "MERGE deletes"
        return operation

    @staticmethod
    def rows(project, table: str) -> list[tuple]:
        got = project.run_sql(f"select id, v from {project.test_schema}.{table}", fetch="all")
        return sorted(tuple(row) for row in got)
