"""dbt-spark needs `file_format: delta` spelled out; the suites below add it to each project."""

import json
import re
from typing import Any

import pytest

DELTA = {"+file_format": "delta"}


def delta_project(**config: Any) -> dict[str, Any]:
    """A project config with Delta for models, seeds and snapshots, merged with `config`."""
    merged: dict[str, Any] = {key: dict(DELTA) for key in ("models", "seeds", "snapshots")}
    for key, value in config.items():
        merged[key] = {**merged[key], **value} if key in merged else value
    return merged


# A macro a model's pre_hook calls to fail its build when run with --vars '{fail: true}'.
FAIL_IF_ASKED = """
{% macro fail_if_asked() %}
  {%- if var('fail', false) -%} select * from injected_failure_no_such_table
  {%- else -%} select 1 {%- endif -%}
{% endmacro %}
"""


def sources_yml(source: str, *tables: str) -> str:
    """A sources.yml with one source in the test's schema, for streams to read from."""
    listed = ", ".join(f"{{name: {table}}}" for table in tables)
    return (
        "version: 2\nsources:\n"
        f"  - name: {source}\n"
        '    schema: "{{ target.schema }}"\n'
        f"    tables: [{listed}]\n"
    )


def table_properties(project: Any, table: str) -> dict[str, str]:
    """SHOW TBLPROPERTIES of a table in the test schema, as a dict."""
    rows = project.run_sql(f"show tblproperties {project.test_schema}.{table}", fetch="all")
    return {row[0]: row[1] for row in rows}


def latest_version(project: Any, table: str) -> int:
    """The latest version of a Delta table in the test schema."""
    [row] = project.run_sql(f"describe history {project.test_schema}.{table} limit 1", fetch="all")
    return int(row[0])


def shown_streams(output: str) -> dict[str, dict[str, Any]]:
    """The streams `show_streams(format='json')` printed, by name: one JSON object per line,
    bare (a run-operation's output) or after dbt's timestamp (a hook in a run's log)."""
    found = (json.loads(line[line.index("{") :]) for line in output.splitlines() if '{"' in line)
    return {stream["name"]: stream for stream in found}


def merge_on_clauses(log: str) -> dict[str, str]:
    """Each MERGE's ON clause (its first line) in a `--debug` log, by target table name."""
    merges = re.findall(r"merge into `?\w+`?\.`?(\w+)`? as t.*?\n\s*on ([^\n]*)", log, re.S)
    return dict(merges)


def create_orders_without_change_data_feed(project: Any) -> None:
    """`orders (id, status)` in the test schema with Change Data Feed explicitly off."""
    project.run_sql(
        f"create table {project.test_schema}.orders (id int, status string) using delta "
        "tblproperties (delta.enableChangeDataFeed = false)"
    )


def run_in_one_session(project: Any, *statements: str) -> list[Any]:
    """Statements on one dbt connection, and so on one Spark session: a conf SET by one of
    them applies to the next. (Each `project.run_sql` opens a connection, and with it a Spark
    session, of its own.)"""
    with project.adapter.connection_named("__test_session"):
        return [project.adapter.execute(sql, fetch=True)[1] for sql in statements]


class Landing:
    """A folder where files land for an insert-only stream: beside the warehouse (on the object
    store under `make test-store`, else on the local disk), written through Hadoop's file system
    as any producer's objects would be (one object per file, no temporary name)."""

    def __init__(self, spark: Any, warehouse: str, name: str) -> None:
        self._jvm = spark._jvm
        self.location = f"{warehouse.rstrip('/').rsplit('/', 1)[0]}/landing/{name}"
        folder = self._jvm.org.apache.hadoop.fs.Path(self.location)
        self._fs = folder.getFileSystem(spark._jsc.hadoopConfiguration())
        self._fs.mkdirs(folder)

    def put(self, name: str, text: str) -> None:
        path = self._jvm.org.apache.hadoop.fs.Path(f"{self.location}/{name}")
        out = self._fs.create(path, True)
        try:
            out.write(text.encode())
        finally:
            out.close()


class DeltaProject:
    """Base for test classes whose project builds models, seeds and snapshots on Delta."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return delta_project()


class WithDevTarget(DeltaProject):
    """A project whose sources sit in the test schema (var `raw_schema`) whichever target
    builds, and whose profile has a second target, `dev`, in the schema `dev_schema` (which
    the test creates): what `dbt clone --target dev` needs."""

    @pytest.fixture(scope="class")
    def project_config_update(self, unique_schema):
        return {**delta_project(), "vars": {"raw_schema": unique_schema}}

    @pytest.fixture(scope="class")
    def dev_schema(self, unique_schema):
        return unique_schema + "_dev"

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target, unique_schema, dev_schema):
        prod = {**dbt_profile_target, "schema": unique_schema}
        dev = {**dbt_profile_target, "schema": dev_schema}
        return {"test": {"outputs": {"default": prod, "dev": dev}, "target": "default"}}
