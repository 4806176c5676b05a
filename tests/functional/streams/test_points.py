"""`at` / `before` name table states (docs/concepts/contract.md, points), on a real Delta history.

Versions 1, 2 and 3 of the source each insert one key, so the keys a new stream reads say
where it started: at={'version': 1} is the state after version 1 (keys 2 and 3 follow),
before={'version': 1} the state just ahead of it (keys 1, 2 and 3). A timestamp exactly at
version 2's commit is in the state `at` names and not in the one `before` names.
"""

from dbt.tests.util import run_dbt, write_file

from tests.functional.delta import DeltaProject, sources_yml

PEEK = """{{{{ config(materialized='table') }}}}
select id from {{{{ stream(source('shop', 'orders'), name='{name}', {point}) }}}}
"""

POINTS = {
    "at_version_1": ("at={'version': 1}", [2, 3]),
    "before_version_1": ("before={'version': 1}", [1, 2, 3]),
    "at_commit_of_2": ("at={'timestamp': 'T2'}", [3]),
    "before_commit_of_2": ("before={'timestamp': 'T2'}", [2, 3]),
}


class TestPoints(DeltaProject):
    def test_points_name_table_states(self, project):
        table = f"{project.test_schema}.orders"
        project.run_sql(
            f"create table {table} (id int) using delta "
            "tblproperties (delta.enableChangeDataFeed = true)"
        )
        for key in (1, 2, 3):
            project.run_sql(f"insert into {table} values ({key})")
        history = project.run_sql(f"describe history {table}", fetch="all")
        t2 = next(row[1] for row in history if row[0] == 2).strftime("%Y-%m-%d %H:%M:%S.%f")

        models = project.project_root / "models"
        write_file(sources_yml("shop", "orders"), models, "sources.yml")
        for name, (point, _) in POINTS.items():
            model = PEEK.format(name=name, point=point.replace("T2", t2))
            write_file(model, models, f"{name}.sql")
        run_dbt(["run"])

        for name, (_, keys) in POINTS.items():
            got = project.run_sql(f"select id from {project.test_schema}.{name}", fetch="all")
            assert sorted(row[0] for row in got) == keys, name
