"""apply_cdc on a target in key-ordered files: its build names the change set's key ranges
where it reads the target (the MERGE's join; a history's stored versions of the touched keys),
so Delta reads none of the target's files outside them, as apply_changes' MERGE does. Each
model's data file of key 45 is moved aside during the build: a build that read it would fail.
"""

from itertools import pairwise

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import DeltaProject, sources_yml
from tests.functional.streams.test_target_table import hidden_data_file, key_ranges

MODEL = """{{{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc',
    unique_key='id', sequence_by='ts', apply_as_deletes="op = 'D'", cdc_columns=['id', 'name'],
    file_rows=10, key_ranges=true{more}) }}}}
select * from {{{{ stream(source('landing', 'events'), mode='append_only') }}}}
"""


class TestApplyCdcKeyRanges(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("landing", "events"),
            "current.sql": MODEL.format(more=""),
            "history.sql": MODEL.format(more=", scd_type=2"),
        }

    def test_the_build_reads_only_the_files_of_the_changed_keys(self, project):
        schema, sql = project.test_schema, project.run_sql
        sql(
            f"create table {schema}.events (id int, name string, op string, ts bigint) "
            "using delta tblproperties (delta.enableChangeDataFeed = true)"
        )
        sql(f"insert into {schema}.events select id, concat('n', id), 'U', 1 from range(50)")
        run_dbt(["run"])
        assert [count for _, _, count in key_ranges(project, "current")] == [10] * 5
        assert [count for _, _, count in key_ranges(project, "history")] == [10] * 5

        sql(
            f"insert into {schema}.events values (3, 'new', 'U', 2), (5, null, 'D', 2), "
            "(3, 'old', 'U', 0)"  # late: older than what the target holds
        )
        with (
            hidden_data_file(project, "current", key=45),
            hidden_data_file(project, "history", key=45),
        ):
            _, log = run_dbt_and_capture(["--debug", "run"])
        ranges = "(t.`id` between 3 and 3 or t.`id` between 5 and 5)"
        assert f"on t.`id` = s.`id` and {ranges}" in log  # the current state's MERGE
        assert f"on t.`id` = s.`id` and t.`__start_at` = s.`__start_at` and {ranges}" in log
        assert f"where (`id`) in (select `id` from _cdc_events) and {ranges}" in log  # versions

        current = sql(f"select id, name from {schema}.current where id < 7 order by id", "all")
        assert [tuple(r) for r in current] == [
            (0, "n0"), (1, "n1"), (2, "n2"), (3, "new"), (4, "n4"), (6, "n6")
        ]  # fmt: skip
        history = sql(
            f"select id, name, __start_at, __end_at from {schema}.history where id in (3, 5) "
            "order by id, __start_at",
            fetch="all",
        )
        assert [tuple(r) for r in history] == [
            (3, "old", 0, 1), (3, "n3", 1, 2), (3, "new", 2, None), (5, "n5", 1, 2)
        ]  # fmt: skip
        assert sql(f"select count(*) from {schema}.current", fetch="one")[0] == 49


TRACKED = """{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc',
    unique_key='id', sequence_by='ts', apply_as_deletes="op = 'D'", scd_type=2,
    cdc_columns=['tier', 'id', 'logins'], track_history_columns=['tier'], file_rows=10,
    key_ranges=true) }}
select * from {{ stream(source('landing', 'events'), mode='append_only') }}
"""


class TestKeptEventsClustered(DeltaProject):
    """A tracked history's kept events: clustered by key at their first compaction (the first
    build wrote them in no order), then written in key-ordered files of file_rows rows, so a
    build reads only those of the change's key ranges."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": sources_yml("landing", "events"), "tiers.sql": TRACKED}

    def test_the_kept_events_are_clustered_and_read_by_range(self, project):
        schema, sql = project.test_schema, project.run_sql
        events = f"{schema}.tiers__cdc_events"
        sql(
            f"create table {schema}.events (id int, tier string, logins int, op string, "
            "ts bigint) using delta tblproperties (delta.enableChangeDataFeed = true)"
        )
        sql(  # keys out of order, in one file
            f"insert into {schema}.events select /*+ REPARTITION(1) */ (id * 37) % 50, 'gold', "
            "1, 'U', 1 from range(50)"
        )
        run_dbt(["run"])
        assert [count for _, _, count in key_ranges(project, "tiers__cdc_events")] == [50]
        [column, *_] = [row[0] for row in sql(f"describe {events}", fetch="all")]
        assert column == "id"  # the key first, whatever the model's order
        sql(  # as an earlier version kept them: in the model's order, not clustered
            f"create or replace table {events} using delta as "
            f"select tier, id, logins, _cdc_sequence, _cdc_delete from {events}"
        )

        sql(f"insert into {schema}.events values (3, 'gold', 2, 'U', 2)")
        run_dbt(["run"])  # the events' first compaction: clustered, in key order
        [detail] = sql(f"describe detail {events}", fetch="all")
        assert list(detail["clusteringColumns"]) == ["id"]
        files = key_ranges(project, "tiers__cdc_events")
        assert sum(count for _, _, count in files) == 51
        assert all(count <= 10 for _, _, count in files), files
        assert all(high < low for (_, high, _), (low, _, _) in pairwise(files)), files

        sql(
            f"insert into {schema}.events values (3, 'silver', 3, 'U', 3), "
            "(5, null, null, 'D', 3), (3, 'gold', 9, 'U', 0)"  # late: before what is kept
        )
        with hidden_data_file(project, "tiers__cdc_events", key=45):
            _, log = run_dbt_and_capture(["--debug", "run"])
        ranges = "(t.`id` between 3 and 3 or t.`id` between 5 and 5)"
        kept = f"tiers__cdc_events` t where (`id`) in (select `id` from _cdc_events) and {ranges}"
        assert kept in log  # the kept events' read
        versions = sql(
            f"select id, __start_at, __end_at, tier, logins from {schema}.tiers "
            "where id in (3, 5)",
            fetch="all",
        )
        assert {tuple(row) for row in versions} == {
            (3, 0, 3, "gold", 2),  # the late event opens the key's first version
            (3, 3, None, "silver", 3),
            (5, 1, 3, "gold", 1),  # closed by the delete
        }
