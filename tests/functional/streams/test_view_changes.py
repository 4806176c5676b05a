"""A view's changes computed from its tables' change sets (view_changes.py) on real Delta tables:
the seed's orders/customers example exactly, and a differential property against the view
evaluated in Python on `VERSION AS OF` snapshots of its tables (3-way join, filter, computed
columns, a UNION ALL branch that joins a table to itself), keyed and as a multiset."""

from collections import Counter
from itertools import count

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dbt.adapters.spark_streams.streams.delta.source import SourceVersion, describe_source
from dbt.adapters.spark_streams.streams.records.netting import net_changes_sql
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.views.algebra import TableInterval, view_change_range
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition
from tests.functional.delta import DeltaProject

ROUNDS = count()
CDF = "using delta tblproperties (delta.enableChangeDataFeed = true)"


def latest(run, table: str) -> SourceVersion:
    return SourceVersion.from_history(run(f"describe history {table} limit 1")[0])


def view_changes(run, schema: str, view: str, offsets: dict, pins: dict, key=()) -> Counter:
    """The view stream's net rows between per-table offsets and pins (table name -> version)."""
    definition = read_view_definition(run, schema, view, "s")
    intervals = {}
    for name in definition.tables:
        bare = name.replace("`", "").split(".")[1]
        source = describe_source(run, CatalogEntry(run, schema, bare), "s")
        pin = pins[bare]
        intervals[name] = TableInterval(source, offsets[bare], pin)
    described = run(f"describe {schema}.{view}")
    columns = tuple(r["col_name"] for r in described if not r["col_name"].startswith("#"))
    assert definition.columns == columns  # the catalog's names, as DESCRIBE gives them
    change = view_change_range(definition, key, intervals)
    return Counter(
        (r["metadata_action"], r["metadata_isupdate"], *(r[c] for c in columns))
        for r in run(net_changes_sql(change))
    )


class TestViewChanges(DeltaProject):
    def test_the_seeds_orders_by_customer_example(self, project):
        run = project.adapter.run_rows
        schema = project.test_schema
        with project.adapter.connection_named("__view_seed"):
            run(f"create table {schema}.orders (id int, order_name string) {CDF}")
            run(f"create table {schema}.customers (id int, customer_name string) {CDF}")
            run(f"use {schema}")
            try:  # unqualified names resolve in the view's stored namespace
                run(
                    "create view orders_by_customer as select * from orders natural join customers"
                )
            finally:
                run("use default")
            run(f"insert into {schema}.orders values (1, 'order1')")
            run(f"insert into {schema}.customers values (1, 'customer1')")
            offsets = {t: latest(run, f"{schema}.{t}").version for t in ("orders", "customers")}

            def pending() -> Counter:
                pins = {t: latest(run, f"{schema}.{t}") for t in ("orders", "customers")}
                return view_changes(run, schema, "orders_by_customer", offsets, pins)

            assert pending() == Counter()
            run(f"insert into {schema}.orders values (1, 'order2')")
            assert pending() == Counter({("INSERT", False, 1, "order2", "customer1"): 1})
            run(f"insert into {schema}.customers values (1, 'customer2')")
            assert pending() == Counter(
                {
                    ("INSERT", False, 1, "order1", "customer2"): 1,
                    ("INSERT", False, 1, "order2", "customer1"): 1,
                    ("INSERT", False, 1, "order2", "customer2"): 1,
                }
            )
            # id is not unique in this view: a keyed read refuses to pair its rows
            pins = {t: latest(run, f"{schema}.{t}") for t in ("orders", "customers")}
            with pytest.raises(Exception, match=r"unique_key \(id\) is not unique in"):
                view_changes(run, schema, "orders_by_customer", offsets, pins, ("id",))


KEYS = st.integers(0, 3)
STEP = st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["insert", "update", "delete", "merge"]),
    KEYS,
    st.integers(-1, 2),
)
HISTORIES = st.lists(STEP, min_size=1, max_size=8)


def dml(table: str, step: tuple, keys_present: set) -> str | None:
    """One step on a table with a unique key `k` and one int column `n`."""
    _, action, key, value = step
    if action == "insert":
        return None if key in keys_present else f"insert into {table} values ({key}, {value})"
    if action == "update":
        return f"update {table} set n = {value} where k = {key}"
    if action == "delete":
        return f"delete from {table} where k = {key}"
    return (
        f"merge into {table} t using (select {key} as k, {value} as n) s on t.k = s.k "
        "when matched then update set n = s.n when not matched then insert *"
    )


def joined(a: list, b: list, c: list) -> list[tuple]:
    """The keyed view in Python: a join b join c on k where c.n >= 0."""
    bn, cn = dict(b), dict(c)
    return [(k, n, bn[k], n + bn[k]) for k, n in a if k in bn and k in cn and cn[k] >= 0]


def unioned(a: list, b: list, c: list) -> list[tuple]:
    """The keyless view: the keyed one, plus a self-join of a (k = k' + 1)."""
    return joined(a, b, c) + [(k, n, n2, -1) for k, n in a for k2, n2 in a if k == k2 + 1]


def diff(old: list[tuple], new: list[tuple], keyed: bool) -> Counter:
    if not keyed:
        plus, minus = Counter(new) - Counter(old), Counter(old) - Counter(new)
        return Counter({("INSERT", False, *r): n for r, n in plus.items()}) + Counter(
            {("DELETE", False, *r): n for r, n in minus.items()}
        )
    before, after = {r[0]: r for r in old}, {r[0]: r for r in new}
    out: Counter = Counter()
    for key in before.keys() | after.keys():
        was, now = before.get(key), after.get(key)
        if was != now:
            update = was is not None and now is not None
            out.update([("DELETE", update, *was)] if was else [])
            out.update([("INSERT", update, *now)] if now else [])
    return out


class TestViewChangesEqualSnapshotDiffs(DeltaProject):
    def test_view_changes_are_the_diff_of_the_view_at_offsets_and_pins(self, project):
        run = project.adapter.run_rows
        schema = project.test_schema

        @given(HISTORIES, st.data())
        def check(history: list[tuple], data: st.DataObject) -> None:
            round_ = next(ROUNDS)
            tables = {t: f"{schema}.{t}{round_}" for t in "abc"}
            for table in tables.values():
                run(f"create table {table} (k int, n int) {CDF}")
            a, b, c = (tables[t] for t in "abc")
            keyed_view = f"""select a.k, a.n, b.n as bn, a.n + b.n as total
                from {a} a join {b} b on a.k = b.k cross join {c} c where c.k = a.k and c.n >= 0"""
            run(f"create view {schema}.keyed{round_} as {keyed_view}")
            run(
                f"create view {schema}.multi{round_} as {keyed_view} union all "
                f"select x.k, x.n, y.n, -1 from {a} x join {a} y on x.k = y.k + 1"
            )
            for step in history:
                present = {r["k"] for r in run(f"select k from {tables[step[0]]}")}
                sql = dml(tables[step[0]], step, present)
                if sql:
                    run(sql)
            offsets, pins, old, new = {}, {}, {}, {}
            for t, table in tables.items():
                pin = latest(run, table)
                offset = data.draw(st.integers(0, pin.version), label=f"offset {t}")
                name = f"{t}{round_}"
                offsets[name], pins[name] = offset, pin
                old[t], new[t] = (
                    [(r["k"], r["n"]) for r in run(f"select * from {table} version as of {v}")]
                    for v in (offset, pin.version)
                )
            for view, keyed, evaluate in (("keyed", True, joined), ("multi", False, unioned)):
                got = view_changes(
                    run, schema, f"{view}{round_}", offsets, pins, ("k",) if keyed else ()
                )
                want = diff(evaluate(**old), evaluate(**new), keyed)
                assert got == want, (view, offsets, pins)

        with project.adapter.connection_named("__view_property"):
            check()
