"""incremental_strategy 'apply_cdc' as a user runs it: change events landing in a Delta table,
read by an append_only stream, applied by dbt to a table of current state (with and without
partial updates) and to a table of every version (SCD type 2, and type 2 with
track_history_columns). Rounds of random events (inserts, updates, partial updates, deletes,
duplicates, late events, ties broken by a struct sequence) land between builds (`dbt run
--threads 4`, the four models at once); after each build every target equals the reference
(tests/unit/cdc/reference.py) applied to all events so far, the offsets equal the landing
table's version, and the tombstones hold the deletes. Then a column the landing table widens
(int to bigint) reaches every target and the kept events; a column added to the events reaches
the tracked history and its kept events; bad events: one sentence, nothing moved; and
on_bad_event 'skip'.
"""

import random
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, latest_version, sources_yml
from tests.functional.streams.test_apply_cdc_property import sequence
from tests.functional.streams.test_dbt_edges import messages
from tests.unit.cdc.reference import Event, apply, rows, versions

SOURCES = sources_yml("landing", "events")
STREAM = "{{ stream(source('landing', 'events'), mode='append_only') }}"
CURRENT = f"""{{{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc',
    unique_key='id', sequence_by='struct(ts, lsn)', apply_as_deletes="op = 'D'",
    cdc_except_columns=['op', 'ts', 'lsn']) }}}}
select * from {STREAM}
"""
PARTIAL = f"""{{{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc',
    unique_key='id', sequence_by='struct(ts, lsn)', apply_as_deletes="op = 'D'",
    ignore_null_updates=true, cdc_columns=['id', 'name', 'amount']) }}}}
select id, name, amount, op, ts, lsn from {STREAM}
"""
VERSIONS = f"""{{{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc',
    unique_key='id', sequence_by='struct(ts, lsn)', apply_as_deletes="op = 'D'", scd_type=2,
    cdc_columns=['id', 'name', 'amount']) }}}}
select * from {STREAM}
"""
TRACKED = f"""{{{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc',
    unique_key='id', sequence_by='struct(ts, lsn)', apply_as_deletes="op = 'D'", scd_type=2,
    track_history_columns=['name'], cdc_except_columns=['op', 'ts', 'lsn'],
    on_schema_change='append_new_columns') }}}}
select * from {STREAM}
"""
COLUMNS = ("name", "amount")


def draw_round(rng: random.Random, clock: int, late: bool) -> list[tuple]:
    """Events (id, name, amount, op, ts, lsn): upserts (some partial), deletes, a duplicate,
    and, when `late`, events older than the previous round's."""
    events = []
    for _ in range(8):
        key = rng.randrange(6)
        ts = clock - rng.randrange(40) if late and rng.random() < 0.4 else clock + rng.randrange(9)
        op = "D" if rng.random() < 0.2 else "U"
        name = None if rng.random() < 0.25 else rng.choice(["ann", "bob", "cy"])
        amount = None if rng.random() < 0.25 else rng.randrange(100)
        events.append((key, name, amount, op, ts, rng.randrange(3)))
    events.append(events[rng.randrange(len(events))])  # delivered twice
    return events


def as_events(landed: list[tuple], columns: tuple[str, ...]) -> list[Event]:
    return [
        (key, (ts, lsn), op == "D", dict(zip(columns, (name, amount), strict=True)))
        for key, name, amount, op, ts, lsn in landed
    ]


def literal(value) -> str:
    if value is None:
        return "null"
    return f"'{value}'" if isinstance(value, str) else str(value)


class TestApplyCdc(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES,
            "current.sql": CURRENT,
            "partial.sql": PARTIAL,
            "versions.sql": VERSIONS,
            "tracked.sql": TRACKED,
        }

    def test_rounds_of_events_equal_the_reference(self, project):
        schema, sql = project.test_schema, project.run_sql
        sql(
            f"create table {schema}.events (id int, name string, amount int, op string, "
            "ts bigint, lsn int) using delta tblproperties (delta.enableChangeDataFeed = true)"
        )
        rng = random.Random(20261129)
        landed: list[tuple] = []
        in_order: list[tuple] = []
        for round_ in range(4):
            batch = draw_round(rng, 100 * (round_ + 1), late=round_ > 0)
            values = ", ".join("(" + ", ".join(map(literal, e)) + ")" for e in batch)
            sql(f"insert into {schema}.events values {values}")
            landed += batch
            run_dbt(["run", "--threads", "4"])
            want = rows(apply({}, as_events(landed, COLUMNS), ignore_null_updates=False))
            assert self.target(project, "current") == want, round_
            # partial updates compose in order: the reference applies the batches one by one
            in_order = batch if round_ == 0 else in_order
            partial = {}
            for seen in range(round_ + 1):
                part = landed[seen * 9 : (seen + 1) * 9]
                partial = apply(partial, as_events(part, COLUMNS), ignore_null_updates=True)
            assert self.target(project, "partial") == rows(partial), round_
            assert self.versions(project) == versions(as_events(landed, COLUMNS)), round_
            tracked = versions(as_events(landed, COLUMNS), tracked=["name"])
            assert self.versions(project, "tracked") == tracked, round_
        version = latest_version(project, "events")
        offsets = dict(sql(f"select name, offset_version from {schema}.dbt_streams", fetch="all"))
        assert offsets == {
            "current__events": version,
            "partial__events": version,
            "versions__events": version,
            "tracked__events": version,
        }
        tombstones = sql(f"select id from {schema}.current__cdc_tombstones", fetch="all")
        assert {row[0] for row in tombstones} <= {e[0] for e in landed if e[3] == "D"}
        assert tombstones, "the rounds drew deletes"

        landed = self.a_widened_column_reaches_every_target(project, landed)
        version = latest_version(project, "events")
        self.a_new_column_reaches_the_tracked_history(project, landed)

        # A NULL sequence: one sentence, nothing written, no offset moved.
        before = self.target(project, "current")
        sql(f"insert into {schema}.events values (3, 'zed', 1, 'U', null, 0, null)")
        failed = run_dbt(["run", "-s", "current"], expect_pass=False)
        said = " ".join(messages(failed)["current"].split())
        assert (
            "Model current: 1 event(s) have a NULL key (id) or a NULL sequence (struct(ts, lsn)), "
            'for example {"id":3}. Nothing was written and no offset moved.'
        ) in said, said
        assert self.target(project, "current") == before
        assert self.offset(project, "current__events") == version
        path = Path(project.project_root) / "models" / "current.sql"
        # A delete condition that is not one: one sentence naming its type, nothing moved.
        sql(f"insert into {schema}.events values (99, 'yu', 2, 'U', 999, 0, null)")
        path.write_text(CURRENT.replace("apply_as_deletes=\"op = 'D'\"", 'apply_as_deletes="op"'))
        refused = run_dbt(["run", "-s", "current"], expect_pass=False)
        said = " ".join(messages(refused)["current"].split())
        assert "Model current: apply_as_deletes (op) is a string, not a condition." in said, said
        assert self.target(project, "current") == before
        assert self.offset(project, "current__events") == version
        path.write_text(
            CURRENT.replace("cdc_except_columns", "on_bad_event='skip', cdc_except_columns")
        )
        skipped = run_dbt(["run", "-s", "current"])
        assert messages(skipped)["current"] == (  # 99, and 7 of the new column's events
            "OK, consumed current__events: 2 inserted, 0 updated, 0 deleted; "
            "skipped 1 bad event(s)"
        )
        assert self.target(project, "current") == {
            **before,
            7: {"name": "zed", "amount": 3},
            99: {"name": "yu", "amount": 2},
        }
        assert self.offset(project, "current__events") == latest_version(project, "events")

    def a_widened_column_reaches_every_target(self, project, landed: list[tuple]) -> list:
        """Columns the landing table widens (int to bigint, by Delta's type widening), the key
        and a field of the struct sequence among them, reach every target, the history's kept
        events and the tombstones: each build reads across the widening (the events' check
        and the tombstones' append as its write does) and widens those tables' columns (the
        sequence's field inside its struct) first; the targets equal the reference."""
        schema, sql = project.test_schema, project.run_sql
        sql(f"alter table {schema}.events set tblproperties (delta.enableTypeWidening = true)")
        sql(f"alter table {schema}.events change column amount type bigint")
        sql(f"alter table {schema}.events change column id type bigint")  # the key
        sql(f"alter table {schema}.events change column lsn type bigint")  # in the sequence
        ts = max(e[4] for e in landed) + 10
        big = 8_000_000_000
        batch = [
            (1, "big", 6_000_000_000, "U", ts, 0),
            (2, "late", 5, "U", ts - 200, 0),
            (3, None, None, "D", ts + 1, 0),
            (4, "ann", 7_000_000_000, "U", ts + 2, 1),
            (big, "kay", 1, "U", ts + 3, 0),
            (big + 1, "lee", 2, "U", ts + 3, 0),
            (big + 1, None, None, "D", ts + 4, 0),
            (5, "lsn", 3, "U", ts + 5, 5_000_000_000),  # a field of struct(ts, lsn) widened
        ]
        values = ", ".join("(" + ", ".join(map(literal, e)) + ")" for e in batch)
        sql(f"insert into {schema}.events values {values}")
        said = messages(run_dbt(["run", "--threads", "4"]))
        for model in ("current", "partial", "versions", "tracked"):
            assert "; widened id: int -> bigint, amount: int -> bigint" in said[model], said[model]
        landed = landed + batch
        assert self.target(project, "current") == rows(
            apply({}, as_events(landed, COLUMNS), ignore_null_updates=False)
        )
        assert self.versions(project) == versions(as_events(landed, COLUMNS))
        tracked = versions(as_events(landed, COLUMNS), tracked=["name"])
        assert self.versions(project, "tracked") == tracked
        kept = sql(f"select max(amount) from {schema}.tracked__cdc_events", fetch="all")
        assert kept[0][0] == 7_000_000_000
        for tombstones in ("current__cdc_tombstones", "versions__cdc_tombstones"):
            found = sql(f"select max(id) from {schema}.{tombstones}", fetch="all")
            assert found[0][0] == big + 1, tombstones  # the key widened there too
        for table, column in (("versions", "__start_at"), ("current", "_cdc_sequence")):
            found = dict((r[0], r[1]) for r in sql(f"describe {schema}.{table}", fetch="all"))
            assert found[column] == "struct<ts:bigint,lsn:bigint>", (table, found)
        return landed

    @staticmethod
    def a_new_column_reaches_the_tracked_history(project, landed: list[tuple]) -> None:
        """A column added to the landing table (append_new_columns) reaches the history and
        the kept events; an event changing only it updates its version; a late event that
        changes the tracked column where a later version does merges that version away."""
        schema, sql = project.test_schema, project.run_sql
        sql(f"alter table {schema}.events add columns (email string)")
        ts = max(e[4] for e in landed) + 10
        sql(
            f"insert into {schema}.events values (7, 'kim', 1, 'U', {ts}, 0, null), "
            f"(7, 'kim', 2, 'U', {ts + 1}, 0, 'k@x'), (7, 'zed', 3, 'U', {ts + 2}, 0, null)"
        )
        run_dbt(["run", "-s", "tracked"])
        query = (
            f"select name, __start_at.ts, __start_at.lsn, __end_at.ts, amount, email "
            f"from {schema}.tracked where id = 7 order by __start_at"
        )
        assert [tuple(row) for row in sql(query, fetch="all")] == [
            ("kim", ts, 0, ts + 2, 2, "k@x"),
            ("zed", ts + 2, 0, None, 3, None),
        ]
        kept = sql(f"select email from {schema}.tracked__cdc_events where id = 7", fetch="all")
        assert sorted(row[0] or "" for row in kept) == ["", "", "k@x"]
        sql(f"insert into {schema}.events values (7, 'zed', 4, 'U', {ts + 1}, 1, null)")
        run_dbt(["run", "-s", "tracked"])
        assert [tuple(row) for row in sql(query, fetch="all")] == [
            ("kim", ts, 0, ts + 1, 2, "k@x"),
            ("zed", ts + 1, 1, None, 3, None),  # the version at ts + 2 merged into it
        ]

    @staticmethod
    def target(project, model: str) -> dict:
        found = project.run_sql(
            f"select id, name, amount from {project.test_schema}.{model}", fetch="all"
        )
        return {row[0]: dict(zip(COLUMNS, row[1:], strict=True)) for row in found}

    @staticmethod
    def versions(project, model: str = "versions") -> set[tuple]:
        found = project.run_sql(
            f"select id, __start_at, __end_at, name, amount from {project.test_schema}.{model}",
            fetch="all",
        )
        return {
            (r[0], sequence(r[1]), sequence(r[2]), (("amount", r[4]), ("name", r[3])))
            for r in found
        }

    @staticmethod
    def offset(project, name: str) -> int:
        [row] = project.run_sql(
            f"select offset_version from {project.test_schema}.dbt_streams where name = '{name}'",
            fetch="all",
        )
        return int(row[0])
