"""A consumer that fails at run time moves nothing; the next good build consumes it all once."""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, run_in_one_session, sources_yml

SOURCES = sources_yml("shop", "orders")

MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select id, status, metadata_action, metadata_isupdate
from {{ stream(source('shop', 'orders')) }}
{% if var('fail', false) %} where raise_error('injected failure') is null {% endif %}
"""


def state(project, table: str) -> list[tuple]:
    rows = project.run_sql(
        f"select id, status from {project.test_schema}.{table} order by id", fetch="all"
    )
    return [tuple(row) for row in rows]


def stream_offset(project) -> int:
    [(offset,)] = project.run_sql(
        f"select offset_version from {project.test_schema}.dbt_streams "
        "where name = 'orders_mirror__orders'",
        fetch="all",
    )
    return offset


def versions(project, table: str) -> int:
    return len(project.run_sql(f"describe history {project.test_schema}.{table}", fetch="all"))


class MirrorProject(DeltaProject):
    """A project with `orders_mirror` consuming a stream on `orders (id, status)`."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, "orders_mirror.sql": MIRROR}

    @staticmethod
    def create_orders(project) -> None:
        project.run_sql(
            f"create table {project.test_schema}.orders (id int, status string) using delta"
        )


class TestFailedBuildMovesNothing(MirrorProject):
    def test_failure_then_recovery(self, project):
        schema = project.test_schema
        self.create_orders(project)
        project.run_sql(
            f"insert into {schema}.orders values (1, 'placed'), (2, 'placed'), (3, 'placed')"
        )
        run_dbt(["run"])
        assert state(project, "orders_mirror") == state(project, "orders")
        offset, target_versions = stream_offset(project), versions(project, "orders_mirror")

        project.run_sql(f"insert into {schema}.orders values (4, 'placed'), (5, 'placed')")
        project.run_sql(f"update {schema}.orders set status = 'shipped' where id = 1")
        project.run_sql(f"delete from {schema}.orders where id = 2")
        results = run_dbt(["run", "--vars", "{fail: true}"], expect_pass=False)
        assert "injected failure" in results.results[0].message
        assert state(project, "orders_mirror") == [(1, "placed"), (2, "placed"), (3, "placed")]
        assert stream_offset(project) == offset
        assert versions(project, "orders_mirror") == target_versions

        run_dbt(["run"])
        assert state(project, "orders_mirror") == state(project, "orders")
        assert state(project, "orders") == [
            (1, "shipped"),
            (3, "placed"),
            (4, "placed"),
            (5, "placed"),
        ]
        # the first build's retention extension, then the three statements: all consumed
        assert stream_offset(project) == offset + 4 == versions(project, "orders") - 1

        target_versions = versions(project, "orders_mirror")
        results = run_dbt(["run"])
        assert results.results[0].message == "OK, no pending changes"
        assert versions(project, "orders_mirror") == target_versions  # no commit at all
        assert state(project, "orders_mirror") == state(project, "orders")
        assert stream_offset(project) == offset + 4


class TestWriteSkippedByDelta(MirrorProject):
    """A build whose transaction Delta already saw (another run committed it) moves nothing."""

    def test_skipped_merge_is_reported(self, project):
        schema = project.test_schema
        self.create_orders(project)
        project.run_sql(f"insert into {schema}.orders values (1, 'placed')")
        run_dbt(["run"])
        offset, target_versions = stream_offset(project), versions(project, "orders_mirror")

        # another run commits transaction 2 of this consumer first (an empty write here)
        run_in_one_session(
            project,
            "set spark.databricks.delta.write.txnAppId=dbt_spark_streams:model.test.orders_mirror",
            "set spark.databricks.delta.write.txnVersion=2",
            f"insert into {schema}.orders_mirror select * from {schema}.orders_mirror where false",
        )
        project.run_sql(f"update {schema}.orders set status = 'shipped' where id = 1")

        results = run_dbt(["run"], expect_pass=False)
        message = " ".join(results.results[0].message.split())
        assert "Stream orders_mirror__orders is being consumed by another run" in message
        assert "Delta skipped transaction 2" in message
        assert state(project, "orders_mirror") == [(1, "placed")]
        assert stream_offset(project) == offset
        assert versions(project, "orders_mirror") == target_versions + 1  # only the other write
