"""A materialized view over an outer join: its refresh equals the query recomputed.

Hypothesis draws LEFT, RIGHT and FULL joins of a fact table and a dimension (NULL join keys,
keys with no partner, partners appearing and disappearing), group keys from either side,
aggregates over either side, a WHERE and HAVING, and batches that change both tables. After
each batch the groups its changes may touch are recomputed (joined_sql.changed_groups_sql)
and written by the MERGE's rule; the target must equal the query recomputed. On SQLite, as
test_refresh_algebra.py.
"""

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbt.adapters.spark_streams.streams.mv.joined_sql import changed_groups_sql, first_build_sql
from dbt.adapters.spark_streams.streams.mv.refresh_sql import KEEP, hidden_columns
from dbt.adapters.spark_streams.streams.mv.shape import Shape, query_shape
from tests.unit.mv.test_refresh_algebra import (
    apply,
    fetch,
    fill,
    merged,
    operations,
    rows,
    same_rows,
    signed_change,
)

COLUMNS = {"s": ["g", "h", "x", "y"], "d": ["g", "region"]}
TABLES = {"s": "src", "d": "dim"}
dims = st.tuples(st.sampled_from([1, 2, 3, 5, None]), st.sampled_from(["north", "south", None]))
dim_operations = st.tuples(
    st.sampled_from(["insert", "update", "delete"]), st.integers(0, 50), dims
)
KEYS = ("s.g", "s.h", "d.region", "d.g")
AGGREGATES = (
    "count(*)",
    "count(s.x)",
    "sum(s.x)",
    "avg(s.y)",
    "min(s.x)",
    "max(d.region)",
    "count(d.g)",
)


@st.composite
def queries(draw: st.DrawFn) -> str:
    side = draw(st.sampled_from(["left", "right", "full"]))
    keys = draw(st.lists(st.sampled_from(KEYS), max_size=2, unique=True))
    aggregates = draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=3, unique=True))
    items = [f"{k} as k{i}" for i, k in enumerate(keys)] + [
        f"{a} as a{i}" for i, a in enumerate(aggregates)
    ]
    where = draw(st.sampled_from(["", "where s.x > 0 or s.x is null", "where d.region is null"]))
    group = f"group by {', '.join(keys)}" if keys else ""
    having = draw(st.sampled_from(["", "having count(*) > 1"])) if keys else ""
    source = f"src s {side} join dim d on s.g = d.g"
    return f"select {', '.join(items)} from {source} {where} {group} {having}"


def refresh_matches_recompute(query: str, facts: list, dimension: list, batches: list) -> None:
    import sqlite3

    shape = query_shape(query)
    assert isinstance(shape, Shape) and shape.tables, (query, shape)
    db = sqlite3.connect(":memory:")
    fill(db, "src", COLUMNS["s"], facts)
    fill(db, "dim", COLUMNS["d"], dimension)
    pinned = {alias: f"select * from {table}" for alias, table in TABLES.items()}
    own, _ = fetch(db, query)
    names, target = fetch(db, first_build_sql(shape, pinned, own))
    assert names == own + [name for name, _ in hidden_columns(shape)]
    keys = [shape.key_output(i) for i in range(len(shape.keys))]
    state = {"s": list(facts), "d": list(dimension)}
    for fact_ops, dim_ops in batches:
        changes = {}
        for alias, ops in (("s", fact_ops), ("d", dim_ops)):
            if not ops:
                continue
            before = state[alias]
            state[alias] = apply(before, ops)
            fill(db, TABLES[alias], COLUMNS[alias], state[alias])
            change = signed_change(before, state[alias])
            fill(db, f"changes_{alias}", [*COLUMNS[alias], "metadata_action"], change)
            changes[alias] = f"select * from changes_{alias}"
        if not changes:
            continue
        refresh = changed_groups_sql(shape, names, pinned, changes, COLUMNS)
        columns, changed = fetch(db, refresh)
        assert columns == [*names, KEEP]
        target = merged(target, changed, keys, len(names))
        _, want = fetch(db, query)
        got = [row[: len(own)] for row in target]
        assert same_rows(got, want), (query, sorted(map(str, got)), sorted(map(str, want)))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    query=queries(),
    facts=st.lists(rows, max_size=8),
    dimension=st.lists(dims, max_size=4),
    batches=st.lists(
        st.tuples(st.lists(operations, max_size=4), st.lists(dim_operations, max_size=3)),
        min_size=1,
        max_size=3,
    ),
)
def test_an_outer_join_refresh_equals_the_query_recomputed(
    query, facts, dimension, batches
) -> None:
    refresh_matches_recompute(query, facts, dimension, batches)


def test_a_partner_disappearing_moves_rows_to_the_null_extended_group() -> None:
    query = (
        "select d.region as k0, count(*) as a0, sum(s.x) as a1 "
        "from src s left join dim d on s.g = d.g group by d.region"
    )
    facts = [(1, "a", 1, 0.0), (1, "b", 2, 0.0), (2, "a", 3, 0.0)]
    dimension = [(1, "north"), (2, "south")]
    # customer 1 leaves the dimension: its two rows move from north to the NULL region
    refresh_matches_recompute(query, facts, dimension, [([], [("delete", 0, None)])])


def test_both_sides_changing_together_recompute_the_old_pair_of_keys() -> None:
    """The fact's old key with the dimension's old value formed a group that neither side's
    changes meet at the pins: joined with the other side's changed rows too, they do."""
    query = (
        "select s.h as k0, d.region as k1, count(*) as a0 "
        "from src s left join dim d on s.g = d.g group by s.h, d.region"
    )
    batch = ([("update", 0, (1, "b", 1, 0.0))], [("update", 0, (1, "south"))])
    refresh_matches_recompute(query, [(1, "a", 1, 0.0)], [(1, "north")], [batch])


def test_a_mart_of_the_first_table_recomputes_only_its_touched_rows_of_it() -> None:
    """Group keys of the first table under LEFT joins: the recompute reads that table
    semi-joined with the touched groups (customers LEFT JOIN orders: the customers touched),
    and the result is still the query's; keys of the other side, or a RIGHT or FULL join,
    read it whole."""
    query = (
        "select d.g as k0, d.region as k1, count(s.x) as a0, sum(s.x) as a1 "
        "from dim d left join src s on s.g = d.g group by d.g, d.region"
    )
    shape = query_shape(query)
    assert isinstance(shape, Shape)
    pinned = {alias: f"select * from {table}" for alias, table in TABLES.items()}
    changes = {"s": "select * from changes_s"}
    sql = changed_groups_sql(shape, ["k0", "k1", "a0", "a1"], pinned, changes, COLUMNS)
    assert "from (select * from dim) as d left semi join _mv_g g on" in sql.lower()
    # the touched groups named twice (Spark computes each name again): the semi join, and the
    # groups' rows at the end; the recompute's rows are the touched groups' already
    assert len(re.findall(r"_mv_g (?:as )?g\b", sql.lower())) == 2, sql
    facts = [(1, "a", 1, 0.0), (2, "b", 2, 0.0), (9, "c", 3, 0.0)]
    dimension = [(1, "north"), (2, "south"), (3, "north"), (None, "west")]
    batches = [
        ([("delete", 0, None), ("insert", None, (3, "d", 4, 0.0))], []),
        ([("update", 0, (None, "b", 5, 0.0))], [("update", 0, (2, "east"))]),
    ]
    refresh_matches_recompute(query, facts, dimension, batches)
    for other in (
        query.replace("left join", "full join"),
        query.replace("d.g as k0", "s.h as k0").replace("group by d.g", "group by s.h"),
    ):
        shape = query_shape(other)
        assert isinstance(shape, Shape)
        sql = changed_groups_sql(shape, ["k0", "k1", "a0", "a1"], pinned, changes, COLUMNS)
        assert "left semi join" not in sql.lower()
        assert len(re.findall(r"join _mv_g (?:as )?g\b", sql.lower())) == 1, sql  # recompute's
