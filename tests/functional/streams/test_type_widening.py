"""A column widened in a stream's source reaches every consumer (streams/delta/type_widening.py).

A source with type widening takes the common pipeline step that widens a column: a MERGE with
schema evolution writes a BIGINT into its INT column `v`. Each strategy's consumer (a mirror, an
upsert, a log of every change, a history), a mirror of a view stream over the source and a
`changes()` reader then build with their default on_schema_change ('ignore'): each target's `v`
is widened before its write, the result line says so, and every target holds 5,000,000,000.
A further change lands in the widened targets as in any other build. Into a target created
without type widening (as before the adapter enabled it on stream targets) a value that fits
the old type would still be written exactly; 5,000,000,000 does not, and the build fails naming
the ALTER that enables widening, and builds once that has run. A model whose output narrows
`v`, or changes its type's family, is refused in one sentence; nothing is written and no
offset moves.
"""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, run_in_one_session, sources_yml

CONFIG = (
    "{{{{ config(materialized='stream_incremental', incremental_strategy='{strategy}'{extra}) }}}}"
)
STREAM = "{{ stream(source('shop', 'items')) }}"
V = "{{ 'cast(v as ' ~ var('retype') ~ ')' if var('retype', none) else 'v' }} as v"
MODELS = {
    "mirror": CONFIG.format(strategy="apply_changes", extra=", unique_key='id'")
    + f"\nselect * from {STREAM}",
    "upserts": CONFIG.format(strategy="merge", extra=", unique_key='id'")
    + f"\nselect id, v from {STREAM} where metadata_action = 'INSERT'",
    "changes_log": CONFIG.format(strategy="append", extra="")
    + "\nselect id, v, metadata_action, metadata_commit_version "
    "from {{ stream(source('shop', 'items'), unique_key='id') }}",
    "versions": CONFIG.format(strategy="history", extra=", unique_key='id'")
    + "\nselect id, v, metadata_action, metadata_commit_version, metadata_commit_timestamp "
    f"from {STREAM}",
    "view_mirror": CONFIG.format(strategy="apply_changes", extra=", unique_key='id'")
    + "\nselect id, v, metadata_action, metadata_isupdate "
    "from {{ stream(source('shop', 'items_view'), unique_key='id') }}",
    "changed": "{{ config(materialized='table') }}\nselect id, v from "
    "{{ changes(source('shop', 'items'), at={'version': 0}, unique_key='id') }}",
    "older": CONFIG.format(
        strategy="apply_changes",
        extra=", unique_key='id', tblproperties={'delta.enableTypeWidening': 'false'}",
    )
    + f"\nselect * from {STREAM}",
    "retyped": CONFIG.format(strategy="apply_changes", extra=", unique_key='id'")
    + f"\nselect id, {V}, metadata_action, metadata_isupdate from {STREAM}",
}
STRATEGIES = ("mirror", "upserts", "changes_log", "versions", "view_mirror")
WIDE = 5_000_000_000
CREATE = (
    "create table {t} (id int not null, v int) using delta tblproperties "
    "(delta.enableChangeDataFeed = true, delta.enableTypeWidening = true)"
)
WIDENING_MERGE = (
    "merge into {t} s using (select 1 as id, cast(5000000000 as bigint) as v union all "
    "select 3, cast(30 as bigint)) c on s.id = c.id "
    "when matched then update set * when not matched then insert *"
)


def rows(project, sql: str) -> list[tuple]:
    return [tuple(row) for row in project.run_sql(sql, fetch="all")]


def v_type(project, model: str) -> str:
    described = project.run_sql(f"describe {project.test_schema}.{model}", fetch="all")
    return {row[0]: row[1] for row in described}["v"]


def offsets(project) -> dict[str, int]:
    found = rows(project, f"select name, offset_version from {project.test_schema}.dbt_streams")
    return dict(found)


class TestTypeWidening(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("shop", "items", "items_view"),
            **{f"{name}.sql": sql for name, sql in MODELS.items()},
        }

    def test_a_widened_column_reaches_every_consumer(self, project):
        schema = project.test_schema
        items = f"{schema}.items"
        project.run_sql(CREATE.format(t=items))
        project.run_sql(f"insert into {items} values (1, 10), (2, 20)")
        # a user's view over a table whose columns widen follows them (WITH SCHEMA EVOLUTION)
        project.run_sql(
            f"create view {schema}.items_view with schema evolution as select id, v from {items}"
        )
        run_dbt(["run"])
        properties = dict(rows(project, f"show tblproperties {schema}.mirror"))
        assert properties["delta.enableTypeWidening"] == "true"

        run_in_one_session(
            project,
            "set spark.databricks.delta.schema.autoMerge.enabled = true",
            WIDENING_MERGE.format(t=items),
        )
        assert v_type(project, "items") == "bigint"
        results = {r.node.name: r for r in run_dbt(["run"], expect_pass=False)}

        for model in STRATEGIES:
            assert results[model].status == "success", (model, results[model].message)
            assert results[model].message.endswith("; widened v: int -> bigint"), model
            assert v_type(project, model) == "bigint", model
        current = [(1, WIDE), (2, 20), (3, 30)]
        assert rows(project, f"select id, v from {items} order by id") == current
        for model in ("mirror", "view_mirror", "changed"):
            assert rows(project, f"select id, v from {schema}.{model} order by id") == current
        upserts = rows(project, f"select id, v from {schema}.upserts order by id")
        assert upserts == current
        logged = rows(project, f"select id, v from {schema}.changes_log where v = {WIDE}")
        assert logged == [(1, WIDE)]
        open_versions = f"select id, v from {schema}.versions where valid_to is null order by id"
        assert rows(project, open_versions) == current

        older = results["older"]
        assert older.status == "error"
        target = f"`{schema}`.`older`"
        assert (
            "Model older: column v (int -> bigint) widened in its source, and its target "
            f"{target} cannot follow in place: it does not have type widening enabled"
            in older.message
        ), older.message
        enable = f"ALTER TABLE {target} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"
        assert f"Run {enable} and build again" in older.message
        assert "--full-refresh -s older" in older.message
        assert "try_cast" not in older.message and "LEGACY" not in older.message
        assert v_type(project, "older") == "int"
        assert rows(project, f"select id, v from {schema}.older order by id") == [(1, 10), (2, 20)]

        # the user runs the ALTER the error names: the next build widens and consumes
        project.run_sql(enable)
        self.further_change_lands(project, items)

    def further_change_lands(self, project, items: str) -> None:
        schema = project.test_schema
        project.run_sql(f"update {items} set v = 6000000000 where id = 2")
        project.run_sql(f"insert into {items} values (4, 7000000000)")
        results = {r.node.name: r for r in run_dbt(["run"])}
        assert results["older"].message.endswith("; widened v: int -> bigint")
        assert "widened" not in results["mirror"].message
        current = [(1, WIDE), (2, 6_000_000_000), (3, 30), (4, 7_000_000_000)]
        for model in ("mirror", "view_mirror", "changed", "older", "upserts"):
            assert rows(project, f"select id, v from {schema}.{model} order by id") == current
        open_versions = f"select id, v from {schema}.versions where valid_to is null order by id"
        assert rows(project, open_versions) == current

    @pytest.mark.parametrize(("retype", "old"), [("smallint", "bigint"), ("string", "bigint")])
    def test_a_narrowed_or_retyped_output_is_refused(self, project, retype, old):
        schema = project.test_schema
        project.run_sql(f"insert into {schema}.items values (9, 9)")
        before = offsets(project)["retyped__items"]
        kept = rows(project, f"select id, v from {schema}.retyped order by id")
        [result] = run_dbt(
            ["run", "-s", "retyped", "--vars", f"{{retype: {retype}}}"], expect_pass=False
        )
        assert result.message.endswith(
            f"Model retyped: the type of column v ({old} -> {retype}) changed between its "
            f"target {schema}.retyped and the model's output, and Delta cannot change the "
            "target's column to it in place (on_schema_change 'ignore'): writing would cast "
            "every value, and truncate or fail on those that do not fit. Nothing was written "
            "and no offset moved. Rebuild the target in the new type with `dbt run "
            "--full-refresh -s retyped`, or cast the column in the model's SQL to the type the "
            f"target keeps (`cast(`v` as {old})`) where its values fit."
        ), result.message
        assert offsets(project)["retyped__items"] == before
        assert rows(project, f"select id, v from {schema}.retyped order by id") == kept
        assert v_type(project, "retyped") == old
