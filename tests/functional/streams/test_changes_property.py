"""`changes(t, at=X, end=Y)` is the net difference between `t` as of X and `t` as of Y.

Hypothesis draws histories of DML (inserts, updates including no-op updates, deletes, and for a
keyless table duplicate rows), commits them to a real Delta table, and for pairs of versions
compares what changes() returns with a diff of the two `VERSION AS OF` snapshots computed in
Python. The engine is called directly (no dbt process): the macro only passes its arguments.
"""

from collections import Counter
from itertools import count

from hypothesis import given
from hypothesis import strategies as st

from dbt.adapters.spark_streams.streams.kinds.choose import changes_sql
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest
from tests.functional.delta import DeltaProject

TABLES = count()
KEYS = st.integers(0, 5)
VALUES = st.sampled_from(["a", "b", "c"])
STEP = st.one_of(
    st.tuples(st.just("insert"), KEYS, VALUES),
    st.tuples(st.just("update"), KEYS, VALUES),
    st.tuples(st.just("delete"), KEYS, VALUES),
)
HISTORIES = st.lists(STEP, min_size=1, max_size=6)
Rows = list[tuple]


def statement(table: str, step: tuple, keyed: bool, rows: Rows) -> str | None:
    """The DML of one step; a keyed table only inserts keys it does not hold."""
    action, key, value = step
    if action == "insert":
        if keyed and any(row[0] == key for row in rows):
            return None
        return f"insert into {table} values ({key}, '{value}')"
    if action == "update":
        return f"update {table} set v = '{value}' where k = {key}"
    return f"delete from {table} where k = {key} and v = '{value}'"


def expected(old: Rows, new: Rows, keyed: bool) -> Counter:
    """The net difference of two states: per key with update pairs, or as a multiset."""
    if not keyed:
        inserts = Counter(new) - Counter(old)
        deletes = Counter(old) - Counter(new)
        return Counter({("INSERT", False, *r): n for r, n in inserts.items()}) + Counter(
            {("DELETE", False, *r): n for r, n in deletes.items()}
        )
    before, after = {r[0]: r for r in old}, {r[0]: r for r in new}
    diff: Counter = Counter()
    for key in before.keys() | after.keys():
        was, now = before.get(key), after.get(key)
        if was == now:
            continue
        update = was is not None and now is not None
        if was is not None:
            diff[("DELETE", update, *was)] += 1
        if now is not None:
            diff[("INSERT", update, *now)] += 1
    return diff


class TestChangesEqualSnapshotDiffs(DeltaProject):
    def test_changes_between_two_versions_is_the_diff_of_their_snapshots(self, project):
        adapter = project.adapter

        def run(sql: str) -> list[dict]:
            return adapter.run_rows(sql)

        @given(HISTORIES, st.booleans(), st.data())
        def check(history: list[tuple], keyed: bool, data: st.DataObject) -> None:
            name = f"hist_{next(TABLES)}"
            table = f"{project.test_schema}.{name}"
            run(
                f"create table {table} (k int, v string) using delta "
                "tblproperties (delta.enableChangeDataFeed = true)"
            )
            rows: Rows = []
            for step in history:
                sql = statement(table, step, keyed, rows)
                if sql:
                    run(sql)
                    rows = [(r["k"], r["v"]) for r in run(f"select * from {table}")]
            latest = int(run(f"describe history {table} limit 1")[0]["version"])
            for _ in range(2):
                x = data.draw(st.integers(-1, latest), label="at")
                y = data.draw(st.integers(max(x, 0), latest), label="end")
                request = ChangesRequest(
                    project.test_schema,
                    name,
                    at={"version": x},
                    end={"version": y},
                    unique_key=("k",) if keyed else (),
                )
                got = Counter(
                    (r["metadata_action"], r["metadata_isupdate"], r["k"], r["v"])
                    for r in run(changes_sql(run, {}, lambda _: None, request))
                )
                old = snapshot(run, table, x)
                assert got == expected(old, snapshot(run, table, y), keyed), (x, y)

        with adapter.connection_named("__changes_property"):
            check()


def snapshot(run, table: str, version: int) -> Rows:
    """The table's rows as of `version` (-1: before it was created, no rows)."""
    if version < 0:
        return []
    return [(r["k"], r["v"]) for r in run(f"select * from {table} version as of {version}")]
