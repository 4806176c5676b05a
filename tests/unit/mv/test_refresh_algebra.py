"""A materialized view's refresh equals recomputing its query, on random queries and histories.

Hypothesis draws a query from the grammar that refreshes incrementally (group keys, the
maintained aggregates, COUNT(DISTINCT), an expression over aggregates, HAVING, SELECT
DISTINCT, a global aggregate, a WHERE, an inner join to a dimension), a table with NULLs in
its group keys and values, duplicate rows and floating-point values, and batches of inserts,
updates and deletes. After each batch the input's signed change (the multiset difference of
the input before and after, what a view stream yields) is refreshed into the target with
changed_groups_sql and the MERGE's rule (a row per changed group: replaced, inserted or, when
not kept, deleted), or, for a query whose aggregates are all kept from the change, by the
clauses of kept_merge_sql's MERGE (kept_merge), and the target must equal the query
recomputed. Everything runs on SQLite (sqlglot transpiles the Spark SQL), so no JVM;
floating-point sums and averages are compared to 1e-6 relative, since a sum kept by adding
deltas rounds differently from a sum recomputed.
"""

import math
import sqlite3
from collections import Counter

import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbt.adapters.spark_streams.streams.mv.refresh_sql import (
    KEEP,
    changed_groups_sql,
    first_build_sql,
    hidden_columns,
    input_sql,
    kept_from_change,
    kept_merge,
)
from dbt.adapters.spark_streams.streams.mv.shape import Shape, query_shape

AGGREGATES = (
    "count(*)",
    "count(s.x)",
    "sum(s.x)",
    "avg(s.y)",
    "avg(s.x)",
    "min(s.x)",
    "max(s.x)",
    "min(s.y)",
    "max(s.h)",
    "sum(s.y)",
    "count(distinct s.x)",
    "sum(s.x) + count(*)",
)
KEYS = ("s.g", "s.h", "d.region")
WHERES = ("", "where s.x > 0", "where s.x is null or s.y < 2.5")
HAVINGS = ("", "having count(*) > 1")

rows = st.tuples(
    st.sampled_from([1, 2, 3, None]),  # g
    st.sampled_from(["a", "b", None]),  # h
    st.one_of(st.none(), st.integers(-3, 5)),  # x
    st.one_of(st.none(), st.floats(-4, 4, allow_nan=False).map(lambda v: round(v, 3))),  # y
)


@st.composite
def queries(draw: st.DrawFn) -> str:
    join = draw(st.booleans())
    source = "src s join dim d on s.g = d.g" if join else "src s"
    if draw(st.booleans()) and not join:
        keys = draw(st.lists(st.sampled_from(KEYS[:2]), min_size=1, max_size=2, unique=True))
        columns = ", ".join(f"{k} as k{i}" for i, k in enumerate(keys))
        return f"select distinct {columns} from {source} {draw(st.sampled_from(WHERES))}"
    keys = draw(st.lists(st.sampled_from(KEYS if join else KEYS[:2]), max_size=2, unique=True))
    aggregates = draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=4, unique=True))
    items = [f"{k} as k{i}" for i, k in enumerate(keys)]
    items += [f"{a} as a{i}" for i, a in enumerate(aggregates)]
    group = f"group by {', '.join(keys)}" if keys else ""
    having = draw(st.sampled_from(HAVINGS)) if keys else ""
    where = draw(st.sampled_from(WHERES))
    return f"select {', '.join(items)} from {source} {where} {group} {having}"


def lite(sql: str) -> str:
    return sqlglot.transpile(sql, read="spark", write="sqlite")[0]


def fetch(db: sqlite3.Connection, sql: str) -> tuple[list[str], list[tuple]]:
    cursor = db.execute(lite(sql))
    return [c[0] for c in cursor.description], cursor.fetchall()


def fill(db: sqlite3.Connection, table: str, columns: list[str], values: list[tuple]) -> None:
    db.execute(f"drop table if exists {table}")
    db.execute(f"create table {table} ({', '.join(columns)})")
    marks = ", ".join("?" * len(columns))
    db.executemany(f"insert into {table} values ({marks})", values)


def signed_change(before: list[tuple], after: list[tuple]) -> list[tuple]:
    """The multiset difference of the input: deletes, then inserts."""
    old, new = Counter(before), Counter(after)
    deleted = [(*row, "DELETE") for row, n in (old - new).items() for _ in range(n)]
    inserted = [(*row, "INSERT") for row, n in (new - old).items() for _ in range(n)]
    return deleted + inserted


def merged(target: list[tuple], changed: list[tuple], keys: list[int], keep: int) -> list[tuple]:
    """The MERGE's rule: a changed group's row replaces its target row (matched on the keys,
    NULL matching NULL), or is inserted; a row not kept deletes it."""
    by_key = {tuple(row[i] for i in keys): row for row in target}
    for row in changed:
        group = tuple(row[i] for i in keys)
        if row[keep]:
            by_key[group] = row[:keep]
        else:
            by_key.pop(group, None)
    return list(by_key.values())


def kept_merged(db: sqlite3.Connection, shape: Shape, names: list[str]) -> list[tuple]:
    """kept_merge_sql's MERGE of `changes` into `target`, clause by clause: a matched group
    that is gone is deleted, any other matched one updated, a new one inserted when its
    condition holds, and the target's other rows kept."""
    parts = kept_merge(shape, "changes", names)
    updated = {column.strip("`"): sql for column, sql in parts.updates}
    columns = ", ".join(updated.get(name, f"t.`{name}`") for name in names)
    matched = f"exists (select 1 from ({parts.source}) as s where {parts.on})"
    held = f"exists (select 1 from target as t where {parts.on})"
    inserts = ", ".join(sql for _, sql in parts.inserts)
    _, rows = fetch(
        db,
        f"select {columns} from target as t join ({parts.source}) as s on {parts.on} "
        f"where not ({parts.gone}) "
        f"union all select t.* from target as t where not {matched} "
        f"union all select {inserts} from ({parts.source}) as s "
        f"where {parts.inserted} and not {held}",
    )
    return rows


def close(a: object, b: object) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-6)
    return a == b


def same_rows(got: list[tuple], want: list[tuple]) -> bool:
    """Equal as multisets, floats to a tolerance: both sorted by a rounded key, then pairwise."""

    def order(row: tuple) -> tuple:
        return tuple((v is None, round(v, 4) if isinstance(v, float) else v) for v in row)

    return len(got) == len(want) and all(
        all(close(a, b) for a, b in zip(g, w, strict=True))
        for g, w in zip(sorted(got, key=order), sorted(want, key=order), strict=True)
    )


def refresh_matches_recompute(query: str, initial: list[tuple], batches: list[list]) -> None:
    shape = query_shape(query)
    assert isinstance(shape, Shape), (query, shape)
    db = sqlite3.connect(":memory:")
    fill(db, "src", ["g", "h", "x", "y"], initial)
    fill(db, "dim", ["g", "region"], [(1, "north"), (2, "south"), (3, "north")])
    own, _ = fetch(db, query)
    names, target = fetch(db, first_build_sql(shape, input_sql(shape), own))
    assert names == own + [name for name, _ in hidden_columns(shape)]
    width = len(own)
    keys = [shape.key_output(i) for i in range(len(shape.keys))]
    current = list(initial)
    for batch in batches:
        _, before = fetch(db, input_sql(shape))
        current = apply(current, batch)
        fill(db, "src", ["g", "h", "x", "y"], current)
        input_columns, after = fetch(db, input_sql(shape))
        fill(db, "changes", [*input_columns, "metadata_action"], signed_change(before, after))
        fill(db, "target", names, target)
        if kept_from_change(shape):
            target = kept_merged(db, shape, names)
        else:
            refresh = changed_groups_sql(shape, "changes", "target", names, input_sql(shape))
            columns, changed = fetch(db, refresh)
            assert columns == [*names, KEEP]
            target = merged(target, changed, keys, len(names))
        _, want = fetch(db, query)
        got = [row[:width] for row in target]
        assert same_rows(got, want), (query, batch, sorted(map(str, got)), sorted(map(str, want)))


def apply(current: list[tuple], batch: list) -> list[tuple]:
    """A batch's inserts, updates (a row replaced) and deletes, by position."""
    rows_now = list(current)
    for op, position, row in batch:
        if op == "insert" or not rows_now:
            rows_now.append(row)
        elif op == "delete":
            rows_now.pop(position % len(rows_now))
        else:
            rows_now[position % len(rows_now)] = row
    return rows_now


operations = st.tuples(st.sampled_from(["insert", "update", "delete"]), st.integers(0, 50), rows)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    query=queries(),
    initial=st.lists(rows, max_size=12),
    batches=st.lists(st.lists(operations, min_size=1, max_size=6), min_size=1, max_size=4),
)
def test_a_refresh_equals_the_query_recomputed(query: str, initial: list, batches: list) -> None:
    refresh_matches_recompute(query, initial, batches)


def test_a_deleted_minimum_recomputes_its_group_and_a_vanished_group_is_deleted() -> None:
    query = "select s.g as k0, min(s.x) as a0, count(*) as a1 from src s group by s.g"
    initial = [(1, "a", 1, 0.0), (1, "a", 5, 0.0), (2, "b", 7, 0.0)]
    # delete g=1's minimum (position 0), then g=2's only row (position 1 after the first)
    refresh_matches_recompute(query, initial, [[("delete", 0, None)], [("delete", 1, None)]])


def test_a_global_aggregate_keeps_its_row_when_the_input_empties() -> None:
    query = "select sum(s.x) as a0, count(*) as a1, avg(s.y) as a2 from src s"
    initial = [(1, "a", 1, 1.5)]
    refresh_matches_recompute(
        query, initial, [[("delete", 0, None)], [("insert", 0, (2, None, 4, 2.0))]]
    )


def test_a_small_changes_groups_are_broadcast_to_the_recompute_and_nothing_else_differs() -> None:
    """Spark knows nothing of how many groups a change touches and would shuffle the whole
    input to join them; a change known small hints their broadcast, the user's hints kept."""
    query = "select /*+ REPARTITION(2) */ s.g as k0, min(s.x) as a0 from src s group by s.g"
    shape = query_shape(query)
    assert isinstance(shape, Shape)
    names = ["k0", "a0", *(name for name, _ in hidden_columns(shape))]
    plain = changed_groups_sql(shape, "changes", "target", names, input_sql(shape))
    hinted = changed_groups_sql(shape, "changes", "target", names, input_sql(shape), True)
    assert "BROADCAST" not in plain
    assert hinted.count("/*+ REPARTITION(2), BROADCAST(f) */") == 1
    assert hinted.count("select /*+ BROADCAST(r) */ ") == 1  # the recomputed groups' rows
    assert hinted.replace(", BROADCAST(f)", "").replace("/*+ BROADCAST(r) */ ", "") == plain
    sqlglot.parse_one(hinted, read="spark")


def test_the_changes_state_is_named_twice_and_each_group_comes_once() -> None:
    """Spark inlines a WITH clause at each of its names, and each copy of `_mv_j` reads and
    groups the change again: it is named by the flagged groups and by the final rows only, each
    changed group's row taken from it or, flagged, from its recompute (the property test above
    checks the rows)."""
    query = "select s.g as k0, min(s.x) as a0, count(distinct s.y) as a1 from src s group by s.g"
    shape = query_shape(query)
    assert isinstance(shape, Shape)
    names = ["k0", "a0", "a1", *(name for name, _ in hidden_columns(shape))]
    refresh = changed_groups_sql(shape, "changes", "target", names, input_sql(shape))
    assert refresh.count("from _mv_j") == 2
    assert "union all" not in refresh
    refresh_matches_recompute(
        query,
        [(1, "a", 1, 0.5), (1, "a", 5, 1.5), (2, "b", 7, 0.5), (None, None, 2, None)],
        [
            [("delete", 0, None), ("insert", 0, (3, "a", 4, 2.0))],
            [("update", 2, (2, "b", 1, 1.0))],
        ],
    )
