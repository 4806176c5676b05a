"""One consumer per stream, and Change Data Feed turned on (or not) when a stream is created."""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import (
    DeltaProject,
    create_orders_without_change_data_feed,
    sources_yml,
    table_properties,
)

SOURCES = sources_yml("shop", "orders")

CONSUMER = """
{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select id from {{ stream(source('shop', 'orders'), name='shared_orders') }}
"""


def registered(project) -> list[tuple]:
    rows = project.run_sql(
        f"select name, consumer from {project.test_schema}.dbt_streams order by name",
        fetch="all",
    )
    return [tuple(row) for row in rows]


def tables(project) -> set[str]:
    rows = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
    return {name for _, name, temporary in rows if not temporary}


class TestTwoConsumersOfOneStream(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, "audit_a.sql": CONSUMER, "audit_b.sql": CONSUMER}

    def test_both_fail_naming_each_other_and_nothing_is_written(self, project):
        project.run_sql(f"create table {project.test_schema}.orders (id int) using delta")
        project.run_sql(f"insert into {project.test_schema}.orders values (1), (2)")
        results = run_dbt(["run"], expect_pass=False)
        messages = {result.node.name: result.message for result in results.results}
        assert "Stream shared_orders is consumed by model.test.audit_b" in messages["audit_a"]
        assert "model.test.audit_a cannot consume it too" in messages["audit_a"]
        assert "Stream shared_orders is consumed by model.test.audit_a" in messages["audit_b"]
        assert "stream(..., name='another_name')" in messages["audit_b"]
        assert not {"audit_a", "audit_b"} & tables(project)
        assert registered(project) == []


class TestLaterConsumerOfARegisteredStream(DeltaProject):
    """A default name taken explicitly by another model is caught through the registry."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES,
            "audit_a.sql": CONSUMER.replace(", name='shared_orders'", ""),
            "audit_b.sql": CONSUMER.replace("shared_orders", "audit_a__orders"),
        }

    def test_second_consumer_fails(self, project):
        project.run_sql(f"create table {project.test_schema}.orders (id int) using delta")
        project.run_sql(f"insert into {project.test_schema}.orders values (1), (2)")
        run_dbt(["run", "--select", "audit_a"])
        results = run_dbt(["run", "--select", "audit_b"], expect_pass=False)
        assert (
            "Stream audit_a__orders is consumed by model.test.audit_a; model.test.audit_b "
            "cannot consume it too" in results.results[0].message
        )
        assert "audit_b" not in tables(project)
        assert registered(project) == [("audit_a__orders", "model.test.audit_a")]


MIRROR = """
{{{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
            unique_key='id', auto_enable_change_tracking={enable}) }}}}
select id, status, metadata_action, metadata_isupdate
from {{{{ stream(source('shop', 'orders')) }}}}
"""


def change_data_feed(project) -> str:
    return table_properties(project, "orders").get("delta.enableChangeDataFeed", "unset")


class TestChangeDataFeedOffAndNotAllowed(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, "mirror.sql": MIRROR.format(enable="false")}

    def test_fails_with_the_command_to_run(self, project):
        schema = project.test_schema
        create_orders_without_change_data_feed(project)
        results = run_dbt(["run"], expect_pass=False)
        assert (
            f"ALTER TABLE `{schema}`.`orders` SET TBLPROPERTIES "
            "(delta.enableChangeDataFeed = true)" in results.results[0].message
        )
        assert change_data_feed(project) == "false"
        assert "mirror" not in tables(project)


class TestChangeDataFeedOffAndAllowed(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, "mirror.sql": MIRROR.format(enable="true")}

    def test_turns_it_on_and_streams_from_then(self, project):
        schema = project.test_schema
        create_orders_without_change_data_feed(project)
        project.run_sql(f"insert into {schema}.orders values (1, 'placed')")
        run_dbt(["run"])
        assert change_data_feed(project) == "true"
        project.run_sql(f"update {schema}.orders set status = 'shipped' where id = 1")
        project.run_sql(f"insert into {schema}.orders values (2, 'placed')")
        run_dbt(["run"])
        rows = project.run_sql(f"select id, status from {schema}.mirror order by id", fetch="all")
        assert [tuple(row) for row in rows] == [(1, "shipped"), (2, "placed")]
