"""Schema changes on a stream's source, made after the stream's offset.

Each source changes its schema between two builds, with an insert before the change (so the
pending changes cross it) and an update, a delete and an insert after. Renamed, dropped and
widened columns are read in the source's current schema and the model's on_schema_change
decides what reaches the target; a change Delta cannot read across fails the build before
anything is written, and so does a peek that would need the consumer's read setting.
"""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, sources_yml

SOURCES = sources_yml("shop", "renamed", "dropped", "widened", "added", "unmapped")

MIRROR = """
{{{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
            unique_key='id', on_schema_change='{setting}'{extra}) }}}}
select * from {{{{ stream(source('shop', '{source}')) }}}}
"""

PEEK = """
{{ config(materialized='table') }}
select * from {{ stream(source('shop', 'renamed'), name='rename_fail__renamed', unique_key='id') }}
"""

WIDENING_TARGET = ", tblproperties={'delta.enableTypeWidening': 'true'}"

# model -> (source, on_schema_change, extra config)
MIRRORS = {
    "rename_ignore": ("renamed", "ignore", ""),
    "rename_append": ("renamed", "append_new_columns", ""),
    "rename_fail": ("renamed", "fail", ""),
    "drop_ignore": ("dropped", "ignore", ""),
    "drop_sync": ("dropped", "sync_all_columns", ""),
    "widen_sync": ("widened", "sync_all_columns", WIDENING_TARGET),
    "widen_fail": ("widened", "fail", ""),
    "add_append": ("added", "append_new_columns", ""),
    "unmapped_mirror": ("unmapped", "append_new_columns", ""),
}

FEED = "delta.enableChangeDataFeed = true"
COLUMN_MAPPING = f"{FEED}, delta.columnMapping.mode = 'name'"
PROPERTIES = {
    "renamed": COLUMN_MAPPING,
    "dropped": COLUMN_MAPPING,
    "widened": f"{FEED}, delta.enableTypeWidening = true",
    "added": FEED,
    "unmapped": COLUMN_MAPPING,
}

# The schema change of each source, between an insert and an update, a delete and an insert.
CHANGES = {
    "renamed": (
        "alter table {t} rename column name to full_name",
        "update {t} set full_name = 'Bo' where id = 2",
        "insert into {t} values (5, 'Ed', 50)",
    ),
    "dropped": (
        "alter table {t} drop column fee",
        "update {t} set name = 'Bo' where id = 2",
        "insert into {t} values (5, 'Ed')",
    ),
    "widened": (
        "alter table {t} alter column fee type bigint",
        "update {t} set fee = 5000000000 where id = 2",
        "insert into {t} values (5, 'Ed', 6000000000)",
    ),
    "added": (
        "alter table {t} add columns (email string)",
        "update {t} set email = 'bo@example.com' where id = 2",
        "insert into {t} values (5, 'Ed', 50, 'ed@example.com')",
    ),
    "unmapped": (
        "alter table {t} set tblproperties (delta.columnMapping.mode = 'none')",
        "update {t} set name = 'Bo' where id = 2",
        "insert into {t} values (5, 'Ed', 50)",
    ),
}

BEFORE = [(1, "Ann", 10), (2, "Bob", 20), (3, "Cy", 30)]


def table(project, name: str) -> str:
    return f"{project.test_schema}.{name}"


def rows(project, name: str) -> list[tuple]:
    result = project.run_sql(f"select * from {table(project, name)} order by id", fetch="all")
    return [tuple(row) for row in result]


def columns(project, name: str) -> list[tuple[str, str]]:
    described = project.run_sql(f"describe table {table(project, name)}", fetch="all")
    return [(row[0], row[1]) for row in described if row[0] and not row[0].startswith("#")]


def offsets(project) -> dict[str, int]:
    result = project.run_sql(
        f"select name, offset_version from {table(project, 'dbt_streams')}", fetch="all"
    )
    return {name: version for name, version in result}


def history(project, source: str) -> list[tuple[int, str]]:
    """(version, operation) of every commit, oldest first."""
    result = project.run_sql(f"describe history {table(project, source)}", fetch="all")
    return sorted((row[0], row[4]) for row in result)


def latest(project, source: str) -> int:
    return history(project, source)[-1][0]


def version_of(project, source: str, operation: str) -> int:
    [version] = [v for v, op in history(project, source) if op == operation]
    return version


def create_sources(project) -> None:
    for source, properties in PROPERTIES.items():
        project.run_sql(
            f"create table {table(project, source)} (id int, name string, fee int) using delta "
            f"tblproperties ({properties})"
        )
        project.run_sql(
            f"insert into {table(project, source)} values (1, 'Ann', 10), (2, 'Bob', 20), "
            "(3, 'Cy', 30)"
        )


def change_sources(project) -> None:
    """An insert, the schema change, an update, a delete, an insert. The unmapped source also
    gets a retention below the consumers' extension, so a build of it would plan a source
    write: the refused build must not make it."""
    project.run_sql(
        f"alter table {table(project, 'unmapped')} set tblproperties "
        "(delta.deletedFileRetentionDuration = 'interval 7 days')"
    )
    for source, (change, update, insert) in CHANGES.items():
        t = table(project, source)
        project.run_sql(f"insert into {t} values (4, 'Di', 40)")
        for statement in (change, update, f"delete from {t} where id = 3", insert):
            project.run_sql(statement.format(t=t))


def messages_by_model(results) -> dict[str, tuple[str, str]]:
    return {
        result.node.name: (str(result.status), " ".join(str(result.message).split()))
        for result in results.results
    }


class TestSourceSchemaChanges(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        models = {"sources.yml": SOURCES, "rename_peek.sql": PEEK}
        for model, (source, setting, extra) in MIRRORS.items():
            models[f"{model}.sql"] = MIRROR.format(source=source, setting=setting, extra=extra)
        return models

    def test_schema_changes(self, project):
        create_sources(project)
        run_dbt(["run"])
        first = offsets(project)
        peek_rows = rows(project, "rename_peek")
        change_sources(project)
        unmapped_before = latest(project, "unmapped")

        results = messages_by_model(run_dbt(["run"], expect_pass=False))
        status = {model: outcome for model, (outcome, _) in results.items()}
        assert status == {
            "rename_ignore": "success",
            "rename_append": "success",
            "rename_fail": "error",
            "drop_ignore": "success",
            "drop_sync": "error",
            "widen_sync": "success",
            "widen_fail": "error",
            "add_append": "success",
            "unmapped_mirror": "error",
            "rename_peek": "error",
        }
        self.read_across(project, first)
        self.on_schema_change_refusals(project, results, first)
        self.refused_before_anything_written(project, results, first, unmapped_before, peek_rows)

        # The fix the error names.
        run_dbt(["run", "-s", "unmapped_mirror", "--full-refresh"])
        assert rows(project, "unmapped_mirror") == [
            (1, "Ann", 10),
            (2, "Bo", 20),
            (4, "Di", 40),
            (5, "Ed", 50),
        ]
        assert offsets(project)["unmapped_mirror__unmapped"] == unmapped_before

    def read_across(self, project, first: dict[str, int]) -> None:
        """Renamed, dropped, widened and added columns: every change read in the current
        schema, the target as on_schema_change has it, the offset at the source's newest."""
        assert columns(project, "rename_ignore") == [
            ("id", "int"),
            ("name", "string"),
            ("fee", "int"),
        ]
        # ignore: the renamed column is not written (updated rows keep the old name, new rows
        # have none); the other columns are.
        assert rows(project, "rename_ignore") == [
            (1, "Ann", 10),
            (2, "Bob", 20),
            (4, None, 40),
            (5, None, 50),
        ]
        assert [name for name, _ in columns(project, "rename_append")] == [
            "id",
            "name",
            "fee",
            "full_name",
        ]
        # Row 4 was inserted before the rename and arrives under the new name.
        assert rows(project, "rename_append") == [
            (1, "Ann", 10, None),
            (2, "Bob", 20, "Bo"),
            (4, None, 40, "Di"),
            (5, None, 50, "Ed"),
        ]
        # ignore keeps the dropped column, which changed rows no longer fill.
        assert rows(project, "drop_ignore") == [
            (1, "Ann", 10),
            (2, "Bo", 20),
            (4, "Di", None),
            (5, "Ed", None),
        ]
        assert ("fee", "bigint") in columns(project, "widen_sync")
        assert rows(project, "widen_sync") == [
            (1, "Ann", 10),
            (2, "Bob", 5000000000),
            (4, "Di", 40),
            (5, "Ed", 6000000000),
        ]
        assert rows(project, "add_append") == [
            (1, "Ann", 10, None),
            (2, "Bob", 20, "bo@example.com"),
            (4, "Di", 40, None),
            (5, "Ed", 50, "ed@example.com"),
        ]
        now = offsets(project)
        for model in ("rename_ignore", "rename_append", "drop_ignore", "widen_sync", "add_append"):
            source = MIRRORS[model][0]
            assert now[f"{model}__{source}"] == latest(project, source), model
            assert now[f"{model}__{source}"] > first[f"{model}__{source}"], model

    def on_schema_change_refusals(self, project, results, first: dict[str, int]) -> None:
        """fail, and sync_all_columns where the target cannot follow: nothing moves."""
        out_of_sync = "The source and target schemas on this incremental model are out of sync"
        assert out_of_sync in results["rename_fail"][1]
        widened = (
            "Model widen_fail: column fee (int -> bigint) widened in its source, and "
            "on_schema_change 'fail' stops the build before it writes"
        )
        assert widened in results["widen_fail"][1], results["widen_fail"][1]
        cannot_drop = "Delta Lake does not support dropping columns from tables"
        assert cannot_drop in results["drop_sync"][1]
        for model in ("rename_fail", "drop_sync"):
            assert rows(project, model) == BEFORE, model
        assert rows(project, "widen_fail") == BEFORE
        assert ("fee", "int") in columns(project, "widen_fail")
        now = offsets(project)
        for model in ("rename_fail", "drop_sync", "widen_fail"):
            name = f"{model}__{MIRRORS[model][0]}"
            assert now[name] == first[name], model

    def refused_before_anything_written(
        self, project, results, first: dict[str, int], unmapped_before: int, peek_rows: list
    ) -> None:
        """Turning column mapping off cannot be read across, and a peek cannot read across a
        rename: each fails with its error, and nothing is written anywhere."""
        schema = project.test_schema
        removed = version_of(project, "unmapped", "REMOVE COLUMN MAPPING")
        offset = first["unmapped_mirror__unmapped"]
        assert results["unmapped_mirror"][1].endswith(
            f"Stream unmapped_mirror__unmapped: version {removed} of `{schema}`.`unmapped` "
            "turned column mapping off (REMOVE COLUMN MAPPING), and Delta cannot read the "
            f"stream's pending changes (versions {offset + 1} to {unmapped_before}) across that "
            "change. Nothing was read or written. Rebuild the consumer to start the stream "
            "again from the source's current rows: dbt run -s unmapped_mirror --full-refresh"
        )
        assert rows(project, "unmapped_mirror") == BEFORE
        assert offsets(project)["unmapped_mirror__unmapped"] == offset
        assert latest(project, "unmapped") == unmapped_before  # no retention extension written

        renamed = version_of(project, "renamed", "RENAME COLUMN")
        peeked = first["rename_fail__renamed"]
        assert results["rename_peek"][1].endswith(
            f"Stream rename_fail__renamed: its pending changes (versions {peeked + 1} to "
            f"{latest(project, 'renamed')} of `{schema}`.`renamed`) cross version {renamed}, "
            "which renamed column name to full_name. Delta reads changes across that only with "
            "a setting the consumer's build applies to its own write, so a peek cannot read "
            "them. Build the consumer first: dbt run -s rename_fail"
        )
        assert rows(project, "rename_peek") == peek_rows
