"""Edges of dbt's own interface: stream() in a view, `--empty`, a consumer that is gone, and
`dbt retry`, `dbt clone` and Delta's RESTORE of a stream target."""

import json
import shutil
from pathlib import Path

import pytest
from dbt.tests.util import rm_file, run_dbt, run_dbt_and_capture, write_file

from tests.functional.delta import DeltaProject, WithDevTarget, latest_version, sources_yml

SOURCES = sources_yml("shop", "orders")

STREAM = "{{ stream(source('shop', 'orders')) }}"
VIEW_ERROR = (
    "stream() cannot be used in a view. A view cannot hold a stream's position: it would show "
    "the changes pending when it was created, forever."
)


def rows(project, table: str, columns: str = "id, status", schema: str = "") -> list[tuple]:
    result = project.run_sql(
        f"select {columns} from {schema or project.test_schema}.{table} order by 1", fetch="all"
    )
    return [tuple(row) for row in result]


def tables(project) -> set[str]:
    found = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
    return {name for _, name, temporary in found if not temporary}


def registered(project) -> list[tuple]:
    """(stream, consumer, offset) of every registered stream; none before the registry exists."""
    if "dbt_streams" not in tables(project):
        return []
    found = project.run_sql(
        f"select name, consumer, offset_version from {project.test_schema}.dbt_streams "
        "order by name",
        fetch="all",
    )
    return [tuple(row) for row in found]


def create_orders(project) -> None:
    schema = project.test_schema
    project.run_sql(f"create table {schema}.orders (id int, status string) using delta")
    project.run_sql(f"insert into {schema}.orders values (1, 'placed'), (2, 'placed')")


class TestStreamInAView(DeltaProject):
    """A view would freeze the versions of its creation: refused, directly or through an
    ephemeral model. Tables, `dbt show` and tests still peek."""

    @pytest.fixture(scope="class")
    def models(self):
        peek = f"select id, status, metadata_action from {STREAM}"
        return {
            "sources.yml": SOURCES,
            "peek_view.sql": "{{ config(materialized='view') }}\n" + peek,
            "peek_ephemeral.sql": "{{ config(materialized='ephemeral') }}\n" + peek,
            "view_over_ephemeral.sql": "{{ config(materialized='view') }}\n"
            "select * from {{ ref('peek_ephemeral') }}",
            "table_over_ephemeral.sql": "{{ config(materialized='table') }}\n"
            "select * from {{ ref('peek_ephemeral') }}",
        }

    @pytest.fixture(scope="class")
    def tests(self):
        return {
            "peek_has_two_inserts.sql": f"select count(*) as n from {STREAM} having count(*) != 2"
        }

    def test_views_are_refused_and_peeks_work(self, project):
        create_orders(project)
        results = run_dbt(["run"], expect_pass=False)
        status = {result.node.name: str(result.status) for result in results.results}
        assert status == {
            "peek_view": "error",
            "view_over_ephemeral": "error",
            "table_over_ephemeral": "success",
        }
        [test] = run_dbt(["test"]).results
        assert (test.node.name, str(test.status)) == ("peek_has_two_inserts", "pass")
        for result in results.results:
            if result.node.name in ("peek_view", "view_over_ephemeral"):
                assert VIEW_ERROR in result.message
                assert f"Model {result.node.name}:" in result.message
        assert not {"peek_view", "view_over_ephemeral"} & tables(project)
        assert rows(project, "table_over_ephemeral", "id, status, metadata_action") == [
            (1, "placed", "INSERT"),
            (2, "placed", "INSERT"),
        ]
        shown = run_dbt(["show", "--select", "peek_view"])
        assert [tuple(row) for row in shown.results[0].agate_table.rows] == [
            (1, "placed", "INSERT"),
            (2, "placed", "INSERT"),
        ]
        assert registered(project) == []


MIRROR = f"""
{{{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
            unique_key='id') }}}}
select id, status, metadata_action, metadata_isupdate from {STREAM}
"""

LOG = f"""
{{{{ config(materialized='stream_incremental', incremental_strategy='append') }}}}
select id, status, metadata_action from {STREAM}
"""


TALLY = """
{{ config(materialized='materialized_view', refresh='incremental') }}
select status, count(*) as n from {{ source('shop', 'orders') }} group by status
"""


class TestEmptyRun(DeltaProject):
    """`dbt run --empty` builds stream models and materialized views with zero rows and
    consumes nothing; an existing table is left as it is, and the next run carries on from
    its offsets."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, "mirror.sql": MIRROR, "log.sql": LOG, "tally.sql": TALLY}

    def test_empty_runs_consume_nothing(self, project):
        schema = project.test_schema
        create_orders(project)

        results = run_dbt(["run", "--empty"])
        assert {r.message for r in results.results} == {
            "OK, --empty: target created empty, nothing consumed"
        }
        assert rows(project, "mirror") == rows(project, "log") == rows(project, "tally", "n") == []
        assert registered(project) == []

        run_dbt(["run"])
        consumed = registered(project)
        assert [stream[:2] for stream in consumed if stream[1] != "model.test.tally"] == [
            ("log__orders", "model.test.log"),
            ("mirror__orders", "model.test.mirror"),
        ]
        assert rows(project, "mirror") == [(1, "placed"), (2, "placed")]
        assert rows(project, "log") == [(1, "placed"), (2, "placed")]

        project.run_sql(f"update {schema}.orders set status = 'shipped' where id = 1")
        project.run_sql(f"insert into {schema}.orders values (3, 'placed')")
        mirror_versions = latest_version(project, "mirror")
        results = run_dbt(["run", "--empty"])
        assert {r.message for r in results.results} == {"OK, --empty: nothing consumed"}
        assert latest_version(project, "mirror") == mirror_versions
        assert rows(project, "mirror") == [(1, "placed"), (2, "placed")]
        assert rows(project, "tally", "status, n") == [("placed", 2)]
        assert registered(project) == consumed

        said = messages(run_dbt(["run"]))
        assert said["tally"].startswith("OK, refreshed incrementally: 1 group changed"), said
        assert rows(project, "tally", "status, n") == [("placed", 2), ("shipped", 1)]
        assert rows(project, "mirror") == [(1, "shipped"), (2, "placed"), (3, "placed")]
        assert sorted(rows(project, "log", "id, status, metadata_action")) == [
            (1, "placed", "DELETE"),
            (1, "placed", "INSERT"),
            (1, "shipped", "INSERT"),
            (2, "placed", "INSERT"),
            (3, "placed", "INSERT"),
        ]
        assert {offset for _, _, offset in registered(project)} == {
            latest_version(project, "orders")
        }


def consumer(stream_name: str) -> str:
    return (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        f"select id, status from {{{{ stream(source('shop', 'orders'), name='{stream_name}') }}}}"
    )


class TestConsumerGone(DeltaProject):
    """A stream outlives its consumer until it is dropped or taken over by another model."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES,
            "first_owner.sql": consumer("shared"),
            "keeper.sql": consumer("kept"),
        }

    def test_drop_and_take_over(self, project, capsys):
        schema, models = project.test_schema, project.project_root / "models"
        create_orders(project)
        run_dbt(["run"])
        source_versions = latest_version(project, "orders")

        _, refused = run_dbt_and_capture(
            ["run-operation", "drop_stream", "--args", "{name: kept}"], expect_pass=False
        )
        assert (
            "Stream kept is consumed by model.test.keeper, which is still in the project, so it "
            "is not dropped." in " ".join(refused.split())
        )

        rm_file(models / "first_owner.sql")
        capsys.readouterr()
        run_dbt(["run-operation", "show_streams", "--args", "{format: json}"])
        printed = capsys.readouterr().out.splitlines()
        shown = {s["name"]: s for s in (json.loads(line) for line in printed if line[:1] == "{")}
        assert (shown["shared"]["consumer"], shown["shared"]["owner_gone"]) == (
            "model.test.first_owner",
            True,
        )
        assert (shown["kept"]["consumer"], shown["kept"]["owner_gone"]) == (
            "model.test.keeper",
            False,
        )

        project.run_sql(f"insert into {schema}.orders values (3, 'placed')")
        write_file(consumer("shared"), models, "new_owner.sql")
        _, logged = run_dbt_and_capture(["run", "--select", "new_owner"])
        assert "Stream shared: taken over by model.test.new_owner from model.test.first_owner" in (
            " ".join(logged.split())
        )
        assert rows(project, "new_owner") == [(1, "placed"), (2, "placed"), (3, "placed")]
        assert [r[:2] for r in registered(project)] == [
            ("kept", "model.test.keeper"),
            ("shared", "model.test.new_owner"),
        ]

        rm_file(models / "new_owner.sql")
        capsys.readouterr()
        run_dbt(["run-operation", "drop_stream", "--args", "{name: shared}"])
        assert (
            "Dropped stream shared (source `{schema}`.`orders`, offset {version}, consumer "
            "model.test.new_owner, no longer in the project). The source is untouched.".format(
                schema=schema, version=latest_version(project, "orders")
            )
            in capsys.readouterr().out
        )
        assert [r[:2] for r in registered(project)] == [("kept", "model.test.keeper")]
        assert latest_version(project, "orders") == source_versions + 1  # only the insert


# Sources in one schema whichever target builds: a dev target's streams read prod's sources.
SHARED_SOURCES = """version: 2
sources:
  - name: shop
    schema: "{{ var('raw_schema') }}"
    tables: [{name: orders}, {name: customers}]
"""
CUSTOMERS_MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select id, name, metadata_action, metadata_isupdate from {{ stream(source('shop', 'customers')) }}
"""


class TestRetryCloneAndRestore(WithDevTarget):
    """`dbt retry` builds the failed stream model once; a target `dbt clone` copied into another
    schema carries on from the offsets of the rows it copied (it used to take its streams for
    new and append every source row again); a target RESTOREd to an older version consumes again
    what the restore took back."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SHARED_SOURCES,
            "mirror.sql": MIRROR,
            "log.sql": LOG,
            "customers_mirror.sql": CUSTOMERS_MIRROR,
        }

    def test_retry_clone_and_restore(self, project, dev_schema):
        schema = project.test_schema
        create_orders(project)
        project.run_sql(f"create table {schema}.customers (id int, name string) using delta")
        project.run_sql(f"insert into {schema}.customers values (1, 'ann')")
        run_dbt(["build"])

        # A build fails where a source is away; `dbt retry` builds that model alone, once.
        project.run_sql(f"insert into {schema}.orders values (3, 'placed')")
        project.run_sql(f"insert into {schema}.customers values (2, 'bob')")
        project.run_sql(f"alter table {schema}.customers rename to {schema}.customers_away")
        failed = run_dbt(["build"], expect_pass=False)
        assert statuses(failed) == {
            "customers_mirror": "error",
            "log": "success",
            "mirror": "success",
        }
        project.run_sql(f"alter table {schema}.customers_away rename to {schema}.customers")
        retried = run_dbt(["retry"])
        assert messages(retried) == {
            "customers_mirror": "OK, consumed customers_mirror__customers: 1 inserted, 0 updated, "
            "0 deleted"
        }
        assert rows(project, "customers_mirror", "id, name") == [(1, "ann"), (2, "bob")]
        assert run_dbt(["retry"]).results == []  # nothing failed: nothing to retry
        assert offsets(project, schema) == {
            "customers_mirror__customers": latest_version(project, "customers"),
            "log__orders": latest_version(project, "orders"),
            "mirror__orders": latest_version(project, "orders"),
        }

        # dbt clone copies the targets into dev; dev's builds carry on from their offsets.
        state = Path(project.project_root) / "state"
        state.mkdir()
        shutil.copy(Path(project.project_root) / "target" / "manifest.json", state)
        project.create_test_schema(dev_schema)
        run_dbt(["clone", "--state", str(state), "--target", "dev"])
        project.run_sql(f"update {schema}.orders set status = 'shipped' where id = 1")
        project.run_sql(f"insert into {schema}.orders values (4, 'placed')")
        consumed = {
            "customers_mirror": "OK, no pending changes",
            "log": "OK, consumed log__orders: 3 inserted, 0 updated, 0 deleted",
            "mirror": "OK, consumed mirror__orders: 1 inserted, 1 updated, 0 deleted",
        }
        assert messages(run_dbt(["build", "--target", "dev"])) == consumed
        assert messages(run_dbt(["build"])) == consumed
        logged = [
            (1, "placed", "DELETE"),
            (1, "placed", "INSERT"),
            (1, "shipped", "INSERT"),
            (2, "placed", "INSERT"),
            (3, "placed", "INSERT"),
            (4, "placed", "INSERT"),
        ]
        mirrored = [(1, "shipped"), (2, "placed"), (3, "placed"), (4, "placed")]
        for target_schema in (schema, dev_schema):
            assert log_rows(project, target_schema) == logged
            assert rows(project, "mirror", schema=target_schema) == mirrored
        newest = latest_version(project, "orders")
        assert offsets(project, dev_schema)["log__orders"] == newest

        # A RESTORE takes the last build back; the next build consumes it again, once.
        before = latest_version(project, "log")
        project.run_sql(f"restore table {schema}.log to version as of {before - 1}")
        assert len(log_rows(project, schema)) == 3
        assert messages(run_dbt(["run", "--select", "log"])) == {"log": consumed["log"]}
        assert log_rows(project, schema) == logged
        assert offsets(project, schema)["log__orders"] == newest

        # A RESTORE to a timestamp names no version: an error, and --full-refresh starts over.
        at = history(project, "log")[1][1]  # the time of the first RESTORE, before the build
        project.run_sql(f"restore table {schema}.log to timestamp as of '{at}'")
        refused = run_dbt(["run", "--select", "log"], expect_pass=False)
        assert "by a RESTORE to a timestamp" in " ".join(messages(refused)["log"].split())
        run_dbt(["run", "--select", "log", "--full-refresh"])
        assert log_rows(project, schema) == [(id_, status, "INSERT") for id_, status in mirrored]


def statuses(result) -> dict[str, str]:
    return {r.node.name: str(r.status) for r in result.results}


def messages(result) -> dict[str, str]:
    return {r.node.name: r.message for r in result.results}


def log_rows(project, schema: str) -> list[tuple]:
    found = project.run_sql(
        f"select id, status, metadata_action from {schema}.log order by 1, 3, 2", fetch="all"
    )
    return [tuple(row) for row in found]


def offsets(project, schema: str) -> dict[str, int]:
    found = project.run_sql(f"select name, offset_version from {schema}.dbt_streams", fetch="all")
    return {name: int(offset) for name, offset in found}


def history(project, table: str) -> list[tuple]:
    found = project.run_sql(f"describe history {project.test_schema}.{table}", fetch="all")
    return [tuple(row) for row in found]
