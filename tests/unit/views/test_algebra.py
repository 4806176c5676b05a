"""The view change algebra without a JVM: for random old and new states of a view's tables,
the signed rows of the view's change feed (view_changes.py) must net to the view's rows in
the new states minus its rows in the old ones.

Both sides run on sqlglot's Python executor: the feed with its table reads bound to the
states and change sets, the view's own definition on each state. The functional tests hold
the same property on Spark (tests/functional/streams/test_view_changes.py); this one runs in
a second, so mutation testing reaches the algebra.
"""

import re
from collections import Counter
from datetime import datetime

import sqlglot
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from sqlglot.executor import execute

from dbt.adapters.spark_streams.streams.delta.retention import Retention
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.algebra import TableInterval, view_feed_sql
from dbt.adapters.spark_streams.streams.views.definition import (
    ViewDefinition,
    read_view_definition,
)

COLUMNS = {"orders": ("id", "cid", "amt"), "customers": ("id", "tier")}
OFFSET, PIN = 1, 2
VIEWS = {
    "join": (
        "select o.id, o.amt * 2 as amt2, c.tier from orders o join customers c "
        "on o.cid = c.id where o.amt > 1",
        ("id", "amt2", "tier"),
    ),
    "comma_join": (
        "select o.id, c.tier from orders o, customers c where o.cid = c.id",
        ("id", "tier"),
    ),
    "self_join": (
        "select a.id, b.id as other from orders a join orders b on a.cid = b.cid",
        ("id", "other"),
    ),
    "union_all": (
        "select id, amt as value from orders where amt > 1 "
        "union all select id, tier from customers",
        ("id", "value"),
    ),
    "nested": (
        "select id, tier from (select o.id, c.tier from orders o join customers c "
        "on o.cid = c.id) as j where tier < 3",
        ("id", "tier"),
    ),
}


def catalog(view_sql: str, view_columns: tuple[str, ...]):
    """DESCRIBE TABLE EXTENDED of the view shop.v and of its two Delta tables."""

    def described(columns: tuple[str, ...], detail: dict[str, str]) -> list[Row]:
        rows = [{"col_name": column, "data_type": "bigint"} for column in columns]
        rows += [{"col_name": "", "data_type": ""}]
        rows += [{"col_name": "# Detailed Table Information", "data_type": ""}]
        return rows + [{"col_name": k, "data_type": v} for k, v in detail.items()]

    def run(sql: str) -> list[Row]:
        assert sql.startswith("describe table extended `shop`."), sql
        table = sql.rsplit("`.`", 1)[1].strip("`")
        if table == "v":
            return described(
                view_columns,
                {
                    "Type": "VIEW",
                    "View Text": view_sql,
                    "View Catalog and Namespace": "spark_catalog.shop",
                },
            )
        return described(COLUMNS[table], {"Type": "MANAGED", "Provider": "delta"})

    return run


def view_of(kind: str) -> ViewDefinition:
    view_sql, columns = VIEWS[kind]
    return read_view_definition(catalog(view_sql, columns), "shop", "v", "s")


def intervals(view: ViewDefinition, changed: set[str]) -> dict[str, TableInterval]:
    """Every table read from OFFSET; those in `changed` pinned at PIN, the others unchanged."""
    result = {}
    for name in view.tables:
        table = name.split("`")[3]
        source = SourceTable(name, COLUMNS[table], True, Retention.from_properties({}))
        pin = PIN if table in changed else OFFSET
        result[name] = TableInterval(source, OFFSET, SourceVersion(pin, datetime(2026, 1, 1)))
    return result


def bound(sql: str) -> str:
    """The feed's table reads named after the executor's tables; its stamps made plain."""
    sql = re.sub(r"TABLE_CHANGES\('`shop`\.`(\w+)`', \d+, \d+\)", r"\1_changes", sql, flags=re.I)
    sql = re.sub(rf"`shop`\.`(\w+)` VERSION AS OF {OFFSET}\b", r"\1_old", sql, flags=re.I)
    sql = re.sub(rf"`shop`\.`(\w+)` VERSION AS OF {PIN}\b", r"\1_new", sql, flags=re.I)
    return re.sub(
        r"cast\((\d+) as bigint\) as _commit_version, timestamp'[^']*' as _commit_timestamp",
        r"\1 as _commit_version",
        sql,
    )


def run(sql: str, tables: dict[str, list[dict]]) -> list[tuple]:
    """`sql` on the executor; each table's columns are given, so empty tables resolve too."""
    schema = {}
    for name in tables:
        columns = COLUMNS[name.split("_")[0]]
        extra = ("_change_type",) if name.endswith("_changes") else ()
        schema[name] = {column: "bigint" for column in columns} | {c: "text" for c in extra}
    return execute(sqlglot.parse_one(sql, read="spark"), schema=schema, tables=tables).rows


def feed_net(
    view: ViewDefinition,
    spans: dict[str, TableInterval],
    tables: dict,
    append_only: bool = False,
    prunes: dict | None = None,
) -> Counter:
    """The feed's rows, inserts +1 and deletes -1. Its terms run one by one: the executor
    confuses UNION ALL branches that reuse one alias."""
    net: Counter = Counter()
    columns = len(view.columns)
    for term in view_feed_sql(view, spans, append_only, prunes).split("\nunion all\n"):
        for row in run(bound(term), tables):
            net[row[:columns]] += 1 if row[columns] == "insert" else -1
    return net


def view_rows(kind: str, orders: list[dict], customers: list[dict]) -> Counter:
    return Counter(run(VIEWS[kind][0], {"orders": orders, "customers": customers}))


rows = st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(0, 3)), max_size=5)


def change_set(table: str, old: list[tuple], new: list[tuple], as_updates: bool) -> list[dict]:
    """Delta's change rows between two states of a table: deletes and inserts, or the same
    as update pre- and post-images."""
    removed = list((Counter(old) - Counter(new)).elements())
    added = list((Counter(new) - Counter(old)).elements())
    before, after = ("update_preimage", "update_postimage") if as_updates else ("delete", "insert")
    changes = [(row, before) for row in removed] + [(row, after) for row in added]
    return [{**as_dict(table, row), "_change_type": kind} for row, kind in changes]


def as_dict(table: str, row: tuple) -> dict:
    return dict(zip(COLUMNS[table], row, strict=False))


# No shrinking: the inputs are small already, and a failing run (every killed mutant of
# `make mutate`) would spend minutes shrinking.
NO_SHRINK = settings(
    max_examples=15,
    derandomize=True,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
# (old rows, new rows) of each table
STATES = st.fixed_dictionaries(
    {"orders": st.tuples(rows, rows), "customers": st.tuples(rows, rows)}
)


def bound_tables(states: dict[str, tuple], as_updates: bool) -> dict[str, list[dict]]:
    """The executor's tables: each table's old and new rows and its change set."""
    tables: dict[str, list[dict]] = {}
    for table, (old, new) in states.items():
        tables[f"{table}_old"] = [as_dict(table, row) for row in old]
        tables[f"{table}_new"] = [as_dict(table, row) for row in new]
        tables[f"{table}_changes"] = change_set(table, old, new, as_updates)
    return tables


# A view, old and new states of its tables, which of them changed, and whether their change
# sets hold updates (pre- and post-images) or deletes and inserts.
CHANGES = {
    "kind": st.sampled_from(sorted(VIEWS)),
    "drawn": STATES,
    "changed": st.sets(st.sampled_from(["orders", "customers"])),
    "as_updates": st.booleans(),
}


def changed_tables(
    drawn: dict[str, tuple], changed: set[str], as_updates: bool
) -> dict[str, list[dict]]:
    """The executor's tables for drawn states, the unchanged tables' new state their old one."""
    states = {t: (old, new if t in changed else old) for t, (old, new) in drawn.items()}
    return bound_tables(states, as_updates)


@NO_SHRINK
@given(**CHANGES)
def test_the_feed_nets_to_the_views_change(
    kind: str, drawn: dict[str, tuple], changed: set[str], as_updates: bool
) -> None:
    tables = changed_tables(drawn, changed, as_updates)
    view = view_of(kind)
    net = feed_net(view, intervals(view, changed), tables)
    expected = view_rows(kind, tables["orders_new"], tables["customers_new"])
    expected.subtract(view_rows(kind, tables["orders_old"], tables["customers_old"]))
    assert {row: n for row, n in net.items() if n} == {row: n for row, n in expected.items() if n}


@NO_SHRINK
@given(kind=st.sampled_from(sorted(VIEWS)), drawn=STATES, as_updates=st.booleans())
def test_append_only_reports_the_view_rows_that_involve_an_insert(
    kind: str, drawn: dict[str, tuple], as_updates: bool
) -> None:
    """The seed's rule: the view over each table's offset plus its inserts, less the view at
    the offsets; updates and deletes never show."""
    tables = bound_tables(drawn, as_updates)
    grown = {
        table: tables[f"{table}_old"]
        + [
            {k: v for k, v in row.items() if k != "_change_type"}
            for row in tables[f"{table}_changes"]
            if row["_change_type"] == "insert"
        ]
        for table in ("orders", "customers")
    }
    view = view_of(kind)
    net = feed_net(view, intervals(view, {"orders", "customers"}), tables, append_only=True)
    expected = view_rows(kind, grown["orders"], grown["customers"])
    expected.subtract(view_rows(kind, tables["orders_old"], tables["customers_old"]))
    assert all(n > 0 for n in net.values())
    assert {row: n for row, n in net.items() if n} == {row: n for row, n in expected.items() if n}


def test_an_unchanged_view_has_an_empty_feed() -> None:
    view = view_of("join")
    assert view_feed_sql(view, intervals(view, set())).endswith(" where false")
