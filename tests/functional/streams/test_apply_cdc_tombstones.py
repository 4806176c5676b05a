"""apply_cdc's tombstones purged after `tombstone_retention_days`, by a build, at
most once an hour (streams/cdc/tombstones.py): with no retention every build purges them,
and a late event older than a purged tombstone brings its key back (as the limitations page
says); with the default retention, a build soon after a purge does not scan the tombstones
again, and the same late event stays deleted; a build whose events delete nothing adds no
commit to them. The build that purges (with a retention) compacts the appends' small files
into one, and no tombstone is lost to it.
"""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.spark_streams.streams.cdc.tombstones import PURGED_AT
from tests.functional.delta import DeltaProject, latest_version, sources_yml, table_properties

MODEL = """{{{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc',
    unique_key='id', sequence_by='ts', apply_as_deletes="op = 'D'",
    cdc_columns=['id', 'name']{retention}) }}}}
select * from {{{{ stream(source('landing', 'events'), mode='append_only') }}}}
"""


class TestTombstonesPurged(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("landing", "events"),
            "none_kept.sql": MODEL.format(retention=", tombstone_retention_days=0"),
            "two_days.sql": MODEL.format(retention=""),
        }

    def test_purged_after_the_retention_at_most_hourly(self, project):
        schema, sql = project.test_schema, project.run_sql
        sql(
            f"create table {schema}.events (id int, name string, op string, ts bigint) "
            "using delta tblproperties (delta.enableChangeDataFeed = true)"
        )
        sql(f"insert into {schema}.events values (1, 'a', 'U', 10), (3, 'c', 'D', 11)")
        run_dbt(["run", "--threads", "2"])
        assert self.tombstones(project) == {"none_kept": {3}, "two_days": {3}}

        sql(f"insert into {schema}.events values (1, 'a', 'D', 20)")
        _, log = run_dbt_and_capture(["--debug", "run", "--threads", "2"])
        assert self.purged(log) == {"none_kept", "two_days"}  # neither purged before
        assert self.tombstones(project) == {"none_kept": {1}, "two_days": {1, 3}}
        for model in ("none_kept", "two_days"):
            assert PURGED_AT in table_properties(project, f"{model}__cdc_tombstones")
        # two_days purged: its first tombstone and this build's append compacted into one
        # file; none_kept's purge left only this build's append
        assert self.compactions(project, "two_days") == [
            latest_version(project, "two_days__cdc_tombstones")
        ]
        assert self.compactions(project, "none_kept") == []
        [detail] = sql(f"describe detail {schema}.two_days__cdc_tombstones", fetch="all")
        assert detail["numFiles"] == 1

        # key 3's delete (ts 11) is purged from none_kept: an older upsert brings it back
        sql(f"insert into {schema}.events values (2, 'b', 'D', 30), (3, 'late', 'U', 5)")
        _, log = run_dbt_and_capture(["--debug", "run", "--threads", "2"])
        assert self.purged(log) == {"none_kept"}  # two_days purged minutes ago
        assert self.tombstones(project) == {"none_kept": {2}, "two_days": {1, 2, 3}}
        assert self.rows(project, "none_kept") == {(3, "late")}
        assert self.rows(project, "two_days") == set()

        # events that delete nothing: the statement that checks them and appends the deletes
        # adds no commit to the tombstones (none_kept, purged by every build, purges again)
        version = latest_version(project, "two_days__cdc_tombstones")
        sql(f"insert into {schema}.events values (4, 'd', 'U', 40)")
        _, log = run_dbt_and_capture(["--debug", "run", "--threads", "2"])
        assert self.purged(log) == {"none_kept"}
        assert latest_version(project, "two_days__cdc_tombstones") == version
        assert self.tombstones(project) == {"none_kept": set(), "two_days": {1, 2, 3}}
        assert self.rows(project, "two_days") == {(4, "d")}

    @staticmethod
    def purged(log: str) -> set[str]:
        """The models whose build ran the purge (its DELETE in dbt's debug output)."""
        return {
            model
            for model in ("none_kept", "two_days")
            if f"{model}__cdc_tombstones` where _cdc_deleted_at <" in log
        }

    @staticmethod
    def compactions(project, model: str) -> list[int]:
        """The versions an OPTIMIZE wrote to the model's tombstones."""
        table = f"{project.test_schema}.{model}__cdc_tombstones"
        history = project.run_sql(f"describe history {table}", fetch="all")
        return [row["version"] for row in history if row["operation"] == "OPTIMIZE"]

    @staticmethod
    def tombstones(project) -> dict[str, set[int]]:
        found = {}
        for model in ("none_kept", "two_days"):
            rows = project.run_sql(
                f"select id from {project.test_schema}.{model}__cdc_tombstones", fetch="all"
            )
            found[model] = {row[0] for row in rows}
        return found

    @staticmethod
    def rows(project, model: str) -> set[tuple]:
        rows = project.run_sql(f"select id, name from {project.test_schema}.{model}", fetch="all")
        return {tuple(row) for row in rows}
