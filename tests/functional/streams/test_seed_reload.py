"""`dbt seed` reloading a seed that streams read: its rows replaced in place reach them as
changes; a seed whose columns changed is recreated, and its streams say so."""

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, write_file

from tests.functional.delta import DeltaProject
from tests.functional.streams.test_dbt_edges import history, messages, rows

SEED_MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select id, name, metadata_action, metadata_isupdate from {{ stream(ref('people')) }}
"""
SEED_LOG = """
{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select id, name, metadata_action from {{ stream(ref('people')) }}
"""


class TestSeedReloadedInPlace(DeltaProject):
    """`dbt seed` over an existing seed replaces its rows in place, so streams reading it see
    the reload as changes (dbt-spark dropped and recreated the table, and every such stream went
    stale); a seed whose columns changed is still recreated, and its streams say so."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"people.csv": "id,name\n1,ann\n2,bob\n"}

    @pytest.fixture(scope="class")
    def models(self):
        return {"mirror.sql": SEED_MIRROR, "log.sql": SEED_LOG}

    def test_reloads_reach_streams_as_changes(self, project):
        seeds = Path(project.project_root) / "seeds"
        run_dbt(["build"])
        write_file("id,name\n1,ann\n2,bobby\n3,cy\n", seeds, "people.csv")
        reloaded = run_dbt(["build"])
        assert messages(reloaded) == {
            "people": "INSERT 3",
            "log": "OK, consumed log__people: 3 inserted, 0 updated, 0 deleted",
            "mirror": "OK, consumed mirror__people: 1 inserted, 1 updated, 0 deleted",
        }
        assert [row[4] for row in history(project, "people")][:2] == ["WRITE", "TRUNCATE"]
        expected = [(1, "ann"), (2, "bobby"), (3, "cy")]
        assert rows(project, "people", "id, name") == rows(project, "mirror", "id, name")
        assert rows(project, "people", "id, name") == expected
        assert sorted(rows(project, "log", "id, name, metadata_action")) == [
            (1, "ann", "INSERT"),
            (2, "bob", "DELETE"),
            (2, "bob", "INSERT"),
            (2, "bobby", "INSERT"),
            (3, "cy", "INSERT"),
        ]

        write_file("id,name,team\n1,ann,a\n", seeds, "people.csv")
        recreated = run_dbt(["build"], expect_pass=False)
        assert [row[4] for row in history(project, "people")] == ["WRITE", "CREATE TABLE"]
        for model in ("log", "mirror"):
            message = " ".join(messages(recreated)[model].split())
            assert f"Stream {model}__people is stale" in message
            assert "was dropped and recreated or replaced" in message
            assert "Rebuild with --full-refresh" in message
