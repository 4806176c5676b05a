"""Hostile configuration values: quotes, backticks, semicolons, comment markers, backslashes,
line breaks and non-ASCII letters in every value a model hands the adapter (stream names,
unique_key, the points of `at` / `before` / `end`, `tblproperties`, `location_root`, the folders
of file tables). Each works as a name or value, or fails its model with a clear error; none
runs a second statement or touches another table. One project, one `dbt run`.
"""

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.spark_streams.streams.sql.quoting import string_literal
from tests.functional.delta import DeltaProject, sources_yml, table_properties

# What an attacker (or an unlucky copy and paste) puts in a value; `{victim}` becomes the
# table a second statement would hit.
HOSTILE = {
    "quote": "o'brien",
    "double_quote": 'say "hi"',
    "backtick": "tick`tock",
    "semicolon": "a; drop table {victim}",
    "line_comment": "b -- the rest",
    "block_comment": "c /* the rest */",
    "closing_quote": "x'); delete from {victim}; --",
    "backslash": "back\\slash\\'",
    "line_break": "two\nlines",
    "non_ascii": "ünïcødé 名前",
}
FOLDERS = {
    "quote": "it's here",
    "backtick": "tick`tock; x",
    "comments": "dash -- x",
    "url_characters": "plus+per%cent #hash ünï",
}
KEY_CASES = ("quote", "backtick", "semicolon", "block_comment", "closing_quote")
PROPERTY_CASES = ("quote", "closing_quote", "backslash", "line_comment", "non_ascii")


def jinja(value: object) -> str:
    """A Python value as a Jinja literal (JSON's escapes are Jinja's); a `{victim}` in a
    string becomes the victim table of the test's schema, joined in by Jinja."""
    text = json.dumps(value)
    return "(" + text.replace("{victim}", '" ~ target.schema ~ ".victim') + ")"


def model(
    stream_args: str = "", source: str = "orders", select: str = "id, status", **config: object
) -> str:
    settings = {"materialized": "stream_incremental", "incremental_strategy": "append", **config}
    rendered = ", ".join(f"{key}={jinja(value)}" for key, value in settings.items())
    return (
        f"{{{{ config({rendered}) }}}}\n"
        f"select {select} from {{{{ stream(source('shop', '{source}'){stream_args}) }}}}\n"
    )


def changes_model(end: str) -> str:
    return (
        "{{ config(materialized='table') }}\n"
        "select id from {{ changes(source('shop', 'orders'), at={'version': 0}, "
        f"end={{'timestamp': {jinja(end)}}}) }}}}\n"
    )


def point(kind: str, at: str, value: str) -> str:
    return f", {at}={{{jinja(kind)}: {jinja(value)}}}"


def models_for(outside: Path) -> dict[str, str]:
    """Every model of the sweep by name (35 in all)."""
    found = {f"name_{case}": model(f", name={jinja(value)}") for case, value in HOSTILE.items()}
    for case in KEY_CASES:
        found[f"key_{case}"] = model(f", unique_key={jinja(HOSTILE[case])}")
    closing = HOSTILE["closing_quote"]
    found |= {
        "at_timestamp": model(point("timestamp", "at", closing)),
        "at_timestamp_comment": model(point("timestamp", "at", "2020-01-01 -- x")),
        "before_timestamp": model(point("timestamp", "before", HOSTILE["quote"])),
        "at_version": model(point("version", "at", "1; " + closing)),
        "at_stream": model(point("stream", "at", closing)),
        "end_timestamp": changes_model(closing),
        "end_semicolon": changes_model(HOSTILE["semicolon"]),
    }
    for case in PROPERTY_CASES:
        found[f"property_{case}"] = model(tblproperties={"note": HOSTILE[case]})
    for case in LOCATION_CASES:  # dbt-spark's clauses of a table model (see clauses.sql)
        settings = {"materialized": "table", "location_root": str(outside / FOLDERS[case]),
                    "tblproperties": {"note": HOSTILE[case]}}  # fmt: skip
        rendered = ", ".join(f"{key}={jinja(value)}" for key, value in settings.items())
        found[f"location_{case}"] = f"{{{{ config({rendered}) }}}}\nselect 1 as id\n"
    for case in FOLDERS:
        found[f"read_files_{case}"] = model(
            ", mode='insert_only'", source=f"files_{case}", select="id"
        )
    return found


SOURCES = sources_yml("shop", "orders", "victim", *(f"files_{case}" for case in FOLDERS))
LOCATION_CASES = ("quote", "backtick")


class TestHostileValues(DeltaProject):
    @pytest.fixture(scope="class")
    def outside(self, tmp_path_factory: pytest.TempPathFactory) -> Path:
        return tmp_path_factory.mktemp("hostile")

    @pytest.fixture(scope="class")
    def models(self, outside: Path) -> dict[str, str]:
        return {
            "sources.yml": SOURCES,
            **{f"{n}.sql": sql for n, sql in models_for(outside).items()},
        }

    def test_each_works_or_fails_clearly_and_nothing_else_is_touched(self, project, outside):
        schema = project.test_schema
        run = project.run_sql
        run(f"create table {schema}.orders (id int, status string) using delta "
            "tblproperties (delta.enableChangeDataFeed = true)")  # fmt: skip
        run(f"insert into {schema}.orders values (1, 'placed'), (2, 'paid')")
        run(f"create table {schema}.victim (id int) using delta")
        run(f"insert into {schema}.victim values (7)")
        for case, folder in FOLDERS.items():
            location = string_literal(str(outside / "files" / folder))
            run(f"create table {schema}.files_{case} (id int) using parquet location {location}")
            run(f"insert into {schema}.files_{case} values (3)")
        victim_history = run(f"describe history {schema}.victim", fetch="all")

        results = run_dbt(["run", "--threads", "4"], expect_pass=False)
        outcomes = {
            r.node.name: (str(r.status), " ".join((r.message or "").split())) for r in results
        }
        failed = {name: said for name, (status, said) in outcomes.items() if status != "success"}
        assert failed == expected_errors(schema), failed

        def rows(sql: str) -> list[tuple]:
            return sorted(tuple(row) for row in run(sql, fetch="all"))

        registered = {name for (name,) in rows(f"select name from {schema}.dbt_streams")}
        assert {
            value.format(victim=f"{schema}.victim") for value in HOSTILE.values()
        } <= registered
        for case in PROPERTY_CASES:
            noted = table_properties(project, f"property_{case}")["note"]
            assert noted == HOSTILE[case].format(victim=f"{schema}.victim"), case
        for case in LOCATION_CASES:
            assert rows(f"select * from {schema}.location_{case}") == [(1,)]
            assert (outside / FOLDERS[case] / f"location_{case}" / "_delta_log").is_dir()
            noted = table_properties(project, f"location_{case}")["note"]
            assert noted == HOSTILE[case].format(victim=f"{schema}.victim"), case
        for case in FOLDERS:  # every folder's one row, read once
            assert rows(f"select id from {schema}.read_files_{case}") == [(3,)], case

        assert rows(f"select * from {schema}.victim") == [(7,)]
        assert run(f"describe history {schema}.victim", fetch="all") == victim_history
        listed = run(f"show tables in {schema}", fetch="all")
        tables = {name for _, name, temporary in listed if not temporary}
        built = {name for name, (status, _) in outcomes.items() if status == "success"}
        sources = {"orders", "victim", *(f"files_{case}" for case in FOLDERS)}
        assert tables == sources | built | {"dbt_streams", "dbt_streams_log", "dbt_streams_files"}


def expected_errors(schema: str) -> dict[str, str]:
    """The models that must fail, each with its message (whitespace collapsed)."""

    def value(case: str) -> str:
        return HOSTILE[case].format(victim=f"{schema}.victim")

    table = f"`{schema}`.`orders`"
    not_iso = (
        "Invalid isoformat string: {!r}. Give {{'version': n}} or "
        "{{'timestamp': 'YYYY-MM-DD HH:MM:SS'}}."
    )
    closing = value("closing_quote")
    errors = {
        f"key_{case}": f"Stream key_{case}__orders: unique_key column(s) {value(case)} not in "
        f"source {table} (columns: id, status). Name key columns of the source table."
        for case in KEY_CASES
    }
    errors |= {
        "at_timestamp": f"Stream start {{'timestamp': {closing!r}}} on {table}: "
        + not_iso.format(closing),
        "at_timestamp_comment": f"Stream start {{'timestamp': '2020-01-01 -- x'}} on {table}: "
        + not_iso.format("2020-01-01 -- x"),
        "before_timestamp": f"Stream start {{'timestamp': {value('quote')!r}}} on {table}: "
        + not_iso.format(value("quote")),
        "at_version": f"Stream start {{'version': {'1; ' + closing!r}}} on {table}: the version "
        f"must be a whole number, not {'1; ' + closing!r}. Give {{'version': n}} or "
        "{'timestamp': 'YYYY-MM-DD HH:MM:SS'}.",
        "at_stream": f"Point {{'stream': {closing!r}}} on {table}: give {{'version': n}} or "
        "{'timestamp': '...'}.",
        "end_timestamp": f"changes({schema}.orders): point {{'timestamp': {closing!r}}}: "
        + not_iso.format(closing),
        "end_semicolon": f"changes({schema}.orders): point "
        f"{{'timestamp': {value('semicolon')!r}}}: " + not_iso.format(value("semicolon")),
    }
    return {
        name: f"Runtime Error in model {name} (models/{name}.sql) {said}"
        for name, said in errors.items()
    }
