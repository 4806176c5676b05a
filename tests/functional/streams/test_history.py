"""The history strategy as a user builds it: a customers table takes seven commits between
two builds (three updates of one key, a delete and a re-insert, a no-op update, an insert);
the history keeps every version with its period, exactly; a tracked-columns history ignores
the changes it does not track; a failed build writes and moves nothing; every state of the
source since the stream began equals the history rows whose period covers its commit time
(current_valid_time(): test_current_valid_time.py).
"""

import itertools
import os
from collections import Counter
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

from tests.conftest import STORES_ENV
from tests.functional.delta import FAIL_IF_ASKED, DeltaProject, sources_yml

# On an object store the source keeps in-commit timestamps, as the object-storage guide asks
# of a history model's sources: without them Change Data Feed dates a commit from the commit
# object's Last-Modified (whole seconds) and DESCRIBE HISTORY from the listing (milliseconds).
ON_STORE = ", delta.enableInCommitTimestamps = true" if os.environ.get(STORES_ENV) else ""
CDF = f"using delta tblproperties (delta.enableChangeDataFeed = true{ON_STORE})"
MODELS = {
    "customers_history": (
        "{{ config(materialized='stream_incremental', incremental_strategy='history', "
        "unique_key='id', pre_hook=\"{{ fail_if_asked() }}\") }}\n"
        "select id, name, city, metadata_action, metadata_commit_version, "
        "metadata_commit_timestamp from {{ stream(source('shop', 'customers')) }}\n"
    ),
    "cities_history": (
        "{{ config(materialized='stream_incremental', incremental_strategy='history', "
        "unique_key='id', history_track_columns=['city'], valid_from_column='since', "
        "key_ranges=true, file_rows=2, "
        "valid_to_column='until') }}\n"
        "select id, name, city, metadata_action, metadata_commit_version, "
        "metadata_commit_timestamp from {{ stream(source('shop', 'customers'), name='cities') }}\n"
        "where id <> 3\n"  # rows the model filters out never reach the history
    ),
    "current_customers": (
        "{{ config(materialized='table') }}\n"
        "select * from {{ current_valid_time(ref('customers_history')) }}\n"
    ),
}
COMMITS = (
    "update {t} set city = 'hamburg' where id = 1",
    "update {t} set city = 'munich' where id = 1",
    "update {t} set name = 'anna' where id = 1",
    "delete from {t} where id = 2",
    "insert into {t} values (2, 'bob', 'lyon')",
    "update {t} set city = city where id = 4",
    "insert into {t} values (5, 'eve', 'kyiv')",
)


class TestHistory(DeltaProject):
    @pytest.fixture(scope="class")
    def macros(self):
        return {"fail_if_asked.sql": FAIL_IF_ASKED}

    def test_history_keeps_every_version(self, project):
        schema, sql = project.test_schema, project.run_sql
        table = f"{schema}.customers"
        sql(f"create table {table} (id int, name string, city string) {CDF}")
        sql(f"insert into {table} values (1, 'ann', 'berlin'), (2, 'bob', 'paris'), "
            "(3, 'cy', 'rome'), (4, 'dee', 'oslo')")  # fmt: skip
        root = Path(project.project_root)
        (root / "models" / "sources.yml").write_text(sources_yml("shop", "customers"))
        for name, text in MODELS.items():
            (root / "models" / f"{name}.sql").write_text(text)

        run_dbt(["run", "--threads", "2"])
        # Each stream starts at the source's version when its build pinned it: the two builds
        # run at once, and either may pin after the other's retention raise (an empty commit
        # of the source), so each history's first rows carry its own start's commit time.
        starts = dict(sql(f"select name, offset_version from {schema}.dbt_streams", "all"))
        start, cities_start = starts["customers_history__customers"], starts["cities"]
        t0, c0 = (self.commit_times(project)[version] for version in (start, cities_start))
        assert self.rows(project, "customers_history") == {
            (1, "ann", "berlin", t0, None),
            (2, "bob", "paris", t0, None),
            (3, "cy", "rome", t0, None),
            (4, "dee", "oslo", t0, None),
        }

        for commit in COMMITS:
            sql(commit.format(t=table))
        latest = self.latest_version(project)
        committed = self.commit_times(project)
        t = {i + 1: committed[latest - len(COMMITS) + 1 + i] for i in range(7)}

        before = self.rows(project, "customers_history")
        offsets = sql(f"select name, offset_version from {schema}.dbt_streams", fetch="all")
        run_dbt(["run", "-s", "customers_history", "--vars", "{fail: true}"], expect_pass=False)
        assert self.rows(project, "customers_history") == before
        assert sql(f"select name, offset_version from {schema}.dbt_streams", fetch="all") == (
            offsets
        )

        run_dbt(["run", "--threads", "2"])
        history = self.rows(project, "customers_history")
        assert history == {
            (1, "ann", "berlin", t0, t[1]),
            (1, "ann", "hamburg", t[1], t[2]),
            (1, "ann", "munich", t[2], t[3]),
            (1, "anna", "munich", t[3], None),
            (2, "bob", "paris", t0, t[4]),  # the delete closes it
            (2, "bob", "lyon", t[5], None),  # the re-insert opens a new one
            (3, "cy", "rome", t0, None),
            (4, "dee", "oslo", t0, None),  # the no-op update opened nothing
            (5, "eve", "kyiv", t[7], None),
        }
        # only city counts: anna's rename is no version; id 3 is filtered out by the model
        assert self.rows(project, "cities_history", "since", "until") == {
            (1, "ann", "berlin", c0, t[1]),
            (1, "ann", "hamburg", t[1], t[2]),
            (1, "ann", "munich", t[2], None),
            (2, "bob", "paris", c0, t[4]),
            (2, "bob", "lyon", t[5], None),
            (4, "dee", "oslo", c0, None),
            (5, "eve", "kyiv", t[7], None),
        }
        # every state of the source since the stream began is the history at that time (all
        # states read in one statement)
        states = sql(
            " union all ".join(
                f"select {version} as version, id, name, city from {table} version as of {version}"
                for version in range(start, latest + 1)
            ),
            fetch="all",
        )
        for version in range(start, latest + 1):
            moment = committed[version]
            state = [row[1:] for row in states if row[0] == version]
            covering = {
                row[:3]
                for row in history
                if row[3] <= moment and (row[4] is None or moment < row[4])
            }
            assert {tuple(row) for row in state} == covering, version

        assert self.rows(project, "current_customers", columns=()) == {
            (1, "anna", "munich"),
            (2, "bob", "lyon"),
            (3, "cy", "rome"),
            (4, "dee", "oslo"),
            (5, "eve", "kyiv"),
        }

        run_dbt(["run", "-s", "customers_history"])  # nothing new: nothing changes
        assert self.rows(project, "customers_history") == history

        # renamed period columns need a rebuild: the build fails before writing anything
        sql(f"insert into {table} values (6, 'fay', 'riga')")
        renamed = MODELS["customers_history"].replace(
            "unique_key='id'", "unique_key='id', valid_to_column='until'"
        )
        (root / "models" / "customers_history.sql").write_text(renamed)
        [failed] = run_dbt(["run", "-s", "customers_history"], expect_pass=False)
        assert (
            f"Model customers_history: the target {schema}.customers_history has no valid_from "
            "/ until columns" in " ".join(failed.message.split())
        )
        assert self.rows(project, "customers_history") == history

        bad = (
            "select * from {{ current_valid_time(ref('customers_history'), valid_from='since') }}"
        )
        (root / "models" / "bad_valid_time.sql").write_text(bad)
        [result] = run_dbt(["run", "-s", "bad_valid_time"], expect_pass=False)
        assert (
            f"current_valid_time({schema}.customers_history): valid_from='since' is not a "
            "column of"
        ) in result.message
        assert "its columns are id, name, city, valid_from, valid_to. Name its period" in (
            " ".join(result.message.split())
        )

    @staticmethod
    def rows(project, table: str, valid_from="valid_from", valid_to="valid_to", columns=None):
        period = (valid_from, valid_to) if columns is None else columns
        listed = ", ".join(("id", "name", "city", *period))
        got = project.run_sql(f"select {listed} from {project.test_schema}.{table}", fetch="all")
        return {tuple(row) for row in got}

    @staticmethod
    def commit_times(project) -> dict:
        """Each version of the source with its commit time, from one DESCRIBE HISTORY."""
        history = project.run_sql(f"describe history {project.test_schema}.customers", fetch="all")
        return {int(row[0]): row[1] for row in history}

    @staticmethod
    def latest_version(project) -> int:
        history = project.run_sql(
            f"describe history {project.test_schema}.customers limit 1", fetch="all"
        )
        return int(history[0][0])


HISTORY_MODEL = (
    "{{ config(materialized='stream_incremental', incremental_strategy='history', "
    "unique_key='k', key_ranges=true, file_rows=3, pre_hook=\"{{ fail_if_asked() }}\") }}\n"
    "select k, v, w, metadata_action, metadata_commit_version, metadata_commit_timestamp\n"
    "from {{ stream(source('fuzz', 'src'), name='history_fuzz') }}\n"
)
HISTORY_SOURCES = """version: 2
sources:
  - name: fuzz
    schema: "{{ target.schema }}"
    tables:
      - {name: src, identifier: "{{ var('src', 'src') }}"}
"""
EXAMPLES = int(os.environ.get("HISTORY_FUZZ_EXAMPLES", "0"))
TABLES = itertools.count()
step = st.tuples(
    st.sampled_from(["insert", "update", "noop", "delete", "merge", "rekey"]),
    st.integers(0, 3),  # key
    st.integers(0, 2),  # value
)
histories = st.lists(
    st.tuples(st.lists(step, min_size=1, max_size=6), st.booleans()),  # (commits, build fails)
    min_size=1,
    max_size=4,
)


def history_statement(table: str, drawn: tuple, present: set[int]) -> str:
    """One drawn commit as SQL; an insert of a key the table holds becomes an update."""
    action, key, value = drawn
    if action == "insert" and key not in present:
        present.add(key)
        return f"insert into {table} values ({key}, {value}, 0)"
    if action == "delete":
        present.discard(key)
        return f"delete from {table} where k = {key}"
    if action == "merge":
        present.add(key)
        return (
            f"merge into {table} t using (select {key} as k, {value} as v, 1 as w) s "
            "on t.k = s.k when matched then update set v = s.v, w = t.w + 1 "
            "when not matched then insert *"
        )
    if action == "noop":
        return f"update {table} set v = v where k = {key}"
    if action == "rekey" and key in present:  # the key itself changes: the old key is gone
        new = max(present) + 10
        present.discard(key)
        present.add(new)
        return f"update {table} set k = {new} where k = {key}"
    return f"update {table} set v = {value} where k = {key}"


class TestHistoryUnderRandomCommits(DeltaProject):
    """A differential test: random commits (several per build, no-op updates, re-inserts and
    updates of the key itself among them, some builds failing); after every build each state
    of the source since the stream began equals, as a multiset, the history rows whose period
    covers its commit time, no period is empty, and no version repeats the one it follows (a
    no-op update opens nothing). Since periods start and end at commit times, that is every
    instant: periods of a key never overlap and leave no gap while the key exists. `make test`
    runs one fixed example; `make fuzz` adds HISTORY_FUZZ_EXAMPLES drawn by Hypothesis."""

    @pytest.fixture(scope="class")
    def macros(self):
        return {"fail_if_asked.sql": FAIL_IF_ASKED}

    def test_history_covers_every_state(self, project):
        models = Path(project.project_root) / "models"
        (models / "sources.yml").write_text(HISTORY_SOURCES)
        (models / "history_fuzz.sql").write_text(HISTORY_MODEL)
        fixed = [
            ([("insert", 0, 1), ("insert", 1, 1), ("update", 0, 2)], True),
            ([("update", 0, 0), ("noop", 1, 0), ("delete", 1, 0), ("insert", 1, 2)], False),
            ([("merge", 2, 1), ("merge", 0, 1), ("delete", 0, 0), ("update", 2, 2)], False),
            ([("rekey", 2, 0), ("update", 1, 0)], False),
        ]

        @settings(
            max_examples=max(EXAMPLES, 1),
            phases=[Phase.explicit, *([Phase.generate, Phase.shrink] if EXAMPLES else [])],
        )
        @given(histories)
        @example(fixed)
        def one_example(drawn):
            table = f"{project.test_schema}.src_{next(TABLES)}"
            project.run_sql(f"create table {table} (k int, v int, w int) {CDF}")
            project.run_sql(f"insert into {table} values (3, 0, 0)")
            variables = {"src": table.split(".")[1]}
            run_dbt(["run", "--full-refresh", "--vars", str(variables)])
            present = {3}
            for commits, fails in drawn:
                for commit in commits:
                    project.run_sql(history_statement(table, commit, present))
                run_dbt(
                    ["run", "--vars", str({**variables, "fail": fails})], expect_pass=not fails
                )
                if not fails:
                    self.check(project, table)

        one_example()

    @staticmethod
    def check(project, table: str) -> None:
        sql = project.run_sql
        history = sql(
            f"select k, v, w, valid_from, valid_to from {project.test_schema}.history_fuzz",
            fetch="all",
        )
        assert all(row[4] is None or row[3] < row[4] for row in history), history
        # the model selects every column, so a version that follows another without a gap
        # and holds the same values was opened by a no-op update
        ordered = sorted(history, key=lambda row: (row[0], row[3]))
        for before, after in itertools.pairwise(ordered):
            same_key_adjacent = before[0] == after[0] and before[4] == after[3]
            assert not (same_key_adjacent and before[:3] == after[:3]), (before, after)
        [[start]] = sql(
            f"select offset_version from {project.test_schema}.dbt_streams "
            "where name = 'history_fuzz'",
            fetch="all",
        )
        commits = sql(f"describe history {table}", fetch="all")
        first = min(int(row[0]) for row in commits if row[1] >= min(h[3] for h in history))
        moments = {int(row[0]): row[1] for row in commits if first <= int(row[0]) <= start}
        # every state in one statement (one Spark job), not one query per version
        states = sql(
            " union all ".join(
                f"select {version} as version, k, v, w from {table} version as of {version}"
                for version in moments
            ),
            fetch="all",
        )
        for version, moment in moments.items():
            state = Counter(tuple(row[1:]) for row in states if row[0] == version)
            covering = Counter(
                tuple(row[:3])
                for row in history
                if row[3] <= moment and (row[4] is None or moment < row[4])
            )
            assert state == covering, (version, history)
