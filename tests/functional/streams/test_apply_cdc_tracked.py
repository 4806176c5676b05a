"""track_history_columns added to a history that was built without it: the model keeps no events
yet, so its next build creates `<model>__cdc_events`, and the stored versions of each key its
events touch stand for that key's events (as after a `dbt clone`): consecutive versions with
equal tracked columns fold into one, and the keys it does not touch keep their versions. The
tombstones table, missing as after a `dbt clone`, is created empty beside them. A build an hour
after the events' last compaction compacts their appends into one file, and the history it
writes from them stays exact.
"""

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.spark_streams.streams.cdc.tombstones import COMPACTED_AT
from tests.functional.delta import DeltaProject, sources_yml, table_properties

CONFIG = """{{{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc',
    unique_key='id', sequence_by='ts', apply_as_deletes="op = 'D'", scd_type=2,
    cdc_columns=['id', 'tier', 'logins']{tracked}) }}}}
select * from {{{{ stream(source('landing', 'events'), mode='append_only') }}}}
"""


class TestTrackHistoryAddedToAHistory(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):  # the model as first written: every event a version
        return {
            "sources.yml": sources_yml("landing", "events"),
            "tiers.sql": CONFIG.format(tracked=""),
        }

    def test_touched_keys_fold_and_the_others_stay(self, project):
        schema, sql = project.test_schema, project.run_sql
        sql(
            f"create table {schema}.events (id int, tier string, logins int, op string, "
            "ts bigint) using delta tblproperties (delta.enableChangeDataFeed = true)"
        )
        sql(
            f"insert into {schema}.events values (1, 'gold', 1, 'U', 10), "
            "(1, 'gold', 2, 'U', 12), (2, 'gold', 1, 'U', 10), (2, 'gold', 2, 'U', 12)"
        )
        run_dbt(["run"])
        assert len(self.versions(project)) == 4  # every event a version
        model = Path(project.project_root) / "models" / "tiers.sql"
        model.write_text(CONFIG.format(tracked=", track_history_columns=['tier']"))
        sql(f"insert into {schema}.events values (1, 'gold', 3, 'U', 20)")
        # and no tombstones either, as a `dbt clone` of the target has none: both start empty
        sql(f"drop table {schema}.tiers__cdc_tombstones")
        run_dbt(["run"])
        assert sql(f"select count(*) from {schema}.tiers__cdc_tombstones", fetch="one")[0] == 0
        assert self.versions(project) == {
            (1, 10, None, "gold", 3),  # its three events, one tier: one version
            (2, 10, 12, "gold", 1),  # untouched: as it was
            (2, 12, None, "gold", 2),
        }
        kept = sql(f"select id, ts_count from (select id, count(*) as ts_count from "
                   f"{schema}.tiers__cdc_events group by id)", fetch="all")  # fmt: skip
        assert {tuple(row) for row in kept} == {(1, 1)}  # the one event since
        compacted = table_properties(project, "tiers__cdc_events")[COMPACTED_AT]

        # two hours later (the property aged): the build appends, then compacts the events
        aged = "2026-01-01T00:00:00+00:00"
        events = f"{schema}.tiers__cdc_events"
        sql(f"alter table {events} set tblproperties ('{COMPACTED_AT}' = '{aged}')")
        sql(f"insert into {schema}.events values (2, 'silver', 3, 'U', 20)")
        run_dbt(["run"])
        history = sql(f"describe history {events}", fetch="all")
        operations = [row["operation"] for row in history]  # newest first
        assert operations[:3] == ["SET TBLPROPERTIES", "OPTIMIZE", "MERGE"], operations
        [detail] = sql(f"describe detail {events}", fetch="all")
        assert detail["numFiles"] == 1
        assert table_properties(project, "tiers__cdc_events")[COMPACTED_AT] > compacted > aged
        kept = sql(f"select id, _cdc_sequence from {events}", fetch="all")
        assert {tuple(row) for row in kept} == {(1, 20), (2, 20)}
        assert self.versions(project) == {
            (1, 10, None, "gold", 3),
            (2, 10, 20, "gold", 2),  # its stored versions, one tier, folded
            (2, 20, None, "silver", 3),
        }

    @staticmethod
    def versions(project) -> set[tuple]:
        found = project.run_sql(
            f"select id, __start_at, __end_at, tier, logins from {project.test_schema}.tiers",
            fetch="all",
        )
        return {tuple(row) for row in found}
