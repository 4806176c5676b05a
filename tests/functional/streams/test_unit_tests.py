"""dbt unit tests of stream models: stream(), changes(), for_system_time() and
current_valid_time() over the rows a unit test gives, for models of every strategy and for
streams over a Delta table, a view and a file table. A unit test reads its fixtures only: no
offset moves, no registry row is written, no source is touched (not even its Change Data
Feed enabled). Then `--sample`, which a stream build takes as a dry run."""

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, table_properties
from tests.functional.streams.test_dbt_edges import latest_version, messages, registered, tables

SOURCES = """
version: 2
sources:
  - name: shop
    schema: "{{ target.schema }}"
    tables:
      - name: items
      - name: orders
      - name: items_view
      - name: landing
      - name: events
        config:
          event_time: at
"""

ITEMS = "{{ stream(source('shop', 'items'), unique_key='id') }}"


def stream_model(strategy: str, select: str, key: str = "id") -> str:
    keyed = f"unique_key='{key}', " if key else ""
    return (
        f"{{{{ config(materialized='stream_incremental', {keyed}"
        f"incremental_strategy='{strategy}') }}}}\n{select}"
    )


def table_model(select: str) -> str:
    return "{{ config(materialized='table') }}\n" + select


MODELS = {
    "sources.yml": SOURCES,
    # apply_changes over a table stream: the change records' columns as the model sees them.
    "mirror.sql": stream_model(
        "apply_changes",
        "select id, v * 10 as v10, metadata_action, metadata_isupdate, metadata_row_id is not "
        f"null as has_row_id, metadata_commit_version is null as no_commit from {ITEMS}",
    ),
    # merge: counts row ids, which an update's two halves share when there is a key.
    "row_ids.sql": stream_model(
        "merge", f"select count(*) as n, count(distinct metadata_row_id) as ids from {ITEMS}", "n"
    ),
    # append over a stream without a key: equal rows get ids of their own.
    "appended.sql": stream_model(
        "append",
        "select count(*) as n, count(distinct metadata_row_id) as ids "
        "from {{ stream(source('shop', 'items')) }}",
        "",
    ),
    "items_history.sql": stream_model(
        "history",
        "select id, v, metadata_action, metadata_commit_version, metadata_commit_timestamp "
        f"from {ITEMS}",
    ),
    "from_view.sql": stream_model(
        "apply_changes",
        "select id, v, metadata_action, metadata_isupdate "
        "from {{ stream(source('shop', 'items_view'), unique_key='id') }}",
    ),
    "from_files.sql": stream_model(
        "append", "select id, v, metadata_action from {{ stream(source('shop', 'landing')) }}", ""
    ),
    "changed.sql": table_model(
        "select id, metadata_action "
        "from {{ changes(source('shop', 'items'), at=0, unique_key='id') }}"
    ),
    "as_of.sql": table_model(
        "select id, v, _sys_start is null and _sys_end is null as no_period "
        "from {{ for_system_time(source('shop', 'items'), as_of='2026-01-01 00:00:00') }}"
    ),
    "current.sql": table_model("select * from {{ current_valid_time(ref('items_history')) }}"),
    # The example of docs/guides/testing.md.
    "orders_mirror.sql": stream_model(
        "apply_changes",
        "select id, amount * 100 as cents, metadata_action, metadata_isupdate\n"
        "from {{ stream(source('shop', 'orders'), unique_key='id') }}\n"
        "where amount is not null",
    ),
    "sampled.sql": stream_model(
        "apply_changes",
        "select * from {{ stream(source('shop', 'events'), unique_key='id') }}",
    ),
    "sampled_mart.sql": "{{ config(materialized='materialized_view') }}\n"
    "select count(*) as n, max(id) as last_id from {{ source('shop', 'events') }}",
}

UNIT_TESTS = """
version: 2
unit_tests:
  - name: inserts_by_default
    model: mirror
    given:
      - input: source('shop', 'items')
        rows: [{id: 1, v: 1}, {id: 2, v: 2}]
    expect:
      rows:
        - {id: 1, v10: 10, metadata_action: INSERT, metadata_isupdate: false,
           has_row_id: true, no_commit: true}
        - {id: 2, v10: 20, metadata_action: INSERT, metadata_isupdate: false,
           has_row_id: true, no_commit: true}
  - name: deletes_and_updates_given
    model: mirror
    given:
      - input: source('shop', 'items')
        rows:
          - {id: 1, v: 1, metadata_action: DELETE, metadata_isupdate: true}
          - {id: 1, v: 2, metadata_action: INSERT, metadata_isupdate: true}
          - {id: 3, v: 3, metadata_action: DELETE}
          - {id: 4, v: 4}
    expect:
      rows:
        - {id: 1, v10: 10, metadata_action: DELETE, metadata_isupdate: true}
        - {id: 1, v10: 20, metadata_action: INSERT, metadata_isupdate: true}
        - {id: 3, v10: 30, metadata_action: DELETE, metadata_isupdate: false}
        - {id: 4, v10: 40, metadata_action: INSERT, metadata_isupdate: false}
  - name: an_update_shares_its_row_id
    model: row_ids
    given:
      - input: source('shop', 'items')
        rows:
          - {id: 1, v: 1, metadata_action: DELETE, metadata_isupdate: true}
          - {id: 1, v: 2, metadata_action: INSERT, metadata_isupdate: true}
          - {id: 2, v: 2}
    expect:
      rows: [{n: 3, ids: 2}]
  - name: equal_rows_have_their_own_ids
    model: appended
    given:
      - input: source('shop', 'items')
        rows: [{id: 5, v: 5}, {id: 5, v: 5}]
    expect:
      rows: [{n: 2, ids: 2}]
  - name: history_rows
    model: items_history
    given:
      - input: source('shop', 'items')
        format: sql
        rows: |
          select 7 as id, 70 as v, 'DELETE' as metadata_action,
                 cast(5 as bigint) as metadata_commit_version
    expect:
      rows:
        - {id: 7, v: 70, metadata_action: DELETE, metadata_commit_version: 5,
           metadata_commit_timestamp: null}
  - name: over_a_view
    model: from_view
    given:
      - input: source('shop', 'items_view')
        rows: [{id: 8, v: 80}]
    expect:
      rows: [{id: 8, v: 80, metadata_action: INSERT}]
  - name: over_a_file_table
    model: from_files
    given:
      - input: source('shop', 'landing')
        format: csv
        rows: |
          id,v
          9,90
    expect:
      rows: [{id: 9, v: 90, metadata_action: INSERT}]
  - name: changes_of_given_rows
    model: changed
    given:
      - input: source('shop', 'items')
        rows: [{id: 1, v: 1, metadata_action: DELETE}, {id: 2, v: 2}]
    expect:
      rows: [{id: 1, metadata_action: DELETE}, {id: 2, metadata_action: INSERT}]
  - name: rows_as_of_a_time
    model: as_of
    given:
      - input: source('shop', 'items')
        rows: [{id: 1, v: 1}]
    expect:
      rows: [{id: 1, v: 1, no_period: true}]
  - name: current_rows_of_a_history
    model: current
    given:
      - input: ref('items_history')
        format: sql
        rows: |
          select 1 as id, 10 as v, timestamp'2020-01-01 00:00:00' as valid_from,
                 cast(null as timestamp) as valid_to
          union all
          select 2, 20, timestamp'2020-01-01 00:00:00', timestamp'2021-01-01 00:00:00'
    expect:
      rows: [{id: 1, v: 10}]

  - name: new_orders_in_cents
    model: orders_mirror
    given:
      - input: source('shop', 'orders')
        rows:
          - {id: 1, amount: 2.50}
          - {id: 2, amount: null}
    expect:
      rows:
        - {id: 1, cents: 250, metadata_action: INSERT, metadata_isupdate: false}

  - name: deletes_and_updates
    model: orders_mirror
    given:
      - input: source('shop', 'orders')
        rows:
          - {id: 1, amount: 2.50, metadata_action: DELETE, metadata_isupdate: true}
          - {id: 1, amount: 3.00, metadata_action: INSERT, metadata_isupdate: true}
          - {id: 3, amount: 1.00, metadata_action: DELETE}
    expect:
      rows:
        - {id: 1, cents: 250, metadata_action: DELETE, metadata_isupdate: true}
        - {id: 1, cents: 300, metadata_action: INSERT, metadata_isupdate: true}
        - {id: 3, cents: 100, metadata_action: DELETE, metadata_isupdate: false}
"""


class TestUnitTestsOfStreamModels(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {**MODELS, "unit_tests.yml": UNIT_TESTS}

    def test_unit_tests_read_their_fixtures_and_touch_nothing(self, project):
        schema = project.test_schema
        project.run_sql(
            f"create table {schema}.items (id int, v int) using delta "
            "tblproperties (delta.enableChangeDataFeed = false)"
        )
        project.run_sql(f"insert into {schema}.items values (100, 100)")
        project.run_sql(f"create table {schema}.orders (id int, amount decimal(10, 2))")
        project.run_sql(f"create view {schema}.items_view as select id, v from {schema}.items")
        project.run_sql(f"create table {schema}.landing (id int, v int) using parquet")
        project.run_sql(f"create table {schema}.events (id int, at timestamp) using delta")
        version = latest_version(project, "items")

        results = run_dbt(["test", "--select", "test_type:unit"])

        assert sorted((r.node.name, r.status) for r in results) == sorted(
            (name, "pass")
            for name in (
                "inserts_by_default", "deletes_and_updates_given", "an_update_shares_its_row_id",
                "equal_rows_have_their_own_ids", "history_rows", "over_a_view",
                "over_a_file_table", "changes_of_given_rows", "rows_as_of_a_time",
                "current_rows_of_a_history", "new_orders_in_cents", "deletes_and_updates",
            )
        )  # fmt: skip
        assert registered(project) == []
        assert latest_version(project, "items") == version
        assert table_properties(project, "items")["delta.enableChangeDataFeed"] == "false"
        assert not tables(project) & {"mirror", "row_ids", "appended", "items_history"}

        # compile and show render the stream's read and peek at it: still nothing consumed.
        run_dbt(["compile", "--select", "mirror"])
        compiled = Path(project.project_root) / "target/compiled/test/models/mirror.sql"
        assert "dbt_spark_streams:stream" in compiled.read_text()
        shown = run_dbt(["show", "--select", "mirror"])
        assert [tuple(row)[:3] for row in shown.results[0].agate_table.rows] == [
            (100, 1000, "INSERT")
        ]
        assert registered(project) == []
        listed = run_dbt(["ls", "--select", "source:shop.items+", "--resource-type", "model"])
        assert sorted(name.split(".")[-1] for name in listed) == [
            "appended", "as_of", "changed", "current", "items_history", "mirror", "row_ids",
        ]  # fmt: skip
        run_dbt(["run", "--select", "mirror"])
        assert len(registered(project)) == 1
        run_dbt(["docs", "generate", "--select", "mirror"])
        catalog = json.loads((Path(project.project_root) / "target/catalog.json").read_text())
        manifest = json.loads((Path(project.project_root) / "target/manifest.json").read_text())
        assert "model.test.mirror" in catalog["nodes"]
        assert manifest["parent_map"]["model.test.mirror"] == ["source.test.shop.items"]

        # --sample where a source has an event_time: a dry run of a stream model and of a
        # materialized view, nothing consumed; one built before is left as it is.
        project.run_sql(f"insert into {schema}.events values (1, current_timestamp())")
        sampled = ["--select", "sampled", "sampled_mart"]
        said = messages(run_dbt(["run", *sampled, "--sample", "1 day"]))
        assert set(said.values()) == {"OK, --sample: target created empty, nothing consumed"}
        assert len(registered(project)) == 1
        assert project.run_sql(f"select * from {schema}.sampled_mart", fetch="all") == []
        run_dbt(["run", *sampled])
        assert len(registered(project)) == 4
        project.run_sql(f"insert into {schema}.events values (2, current_timestamp())")
        said = messages(run_dbt(["run", *sampled, "--sample", "1 day"]))
        assert set(said.values()) == {"OK, --sample: nothing consumed"}
        mart = f"select n, last_id from {schema}.sampled_mart"
        assert project.run_sql(mart, fetch="all") == [(1, 1)]
        said = messages(run_dbt(["run", "--select", "sampled_mart"]))
        assert said["sampled_mart"].startswith("OK, refreshed incrementally: 1 group changed")
        assert project.run_sql(mart, fetch="all") == [(2, 2)]
        assert project.run_sql(f"select id from {schema}.sampled", fetch="all") == [(1,)]
