"""The view change algebra on shapes the random property of test_algebra.py does not draw: a
view over `*` (its change rows read by type, not signed), a subquery read before a join, each
term's predicates on the other tables' scans, the view's state at its pins or offsets, and
the change range the netting reads; every query runs on sqlglot's Python executor."""

import re
from collections import Counter
from dataclasses import replace

import pytest

from dbt.adapters.spark_streams.streams.views.algebra import (
    view_change_range,
    view_feed_sql,
    view_state_sql,
)
from dbt.adapters.spark_streams.streams.views.definition import (
    ViewDefinition,
    read_view_definition,
)
from tests.unit.views.test_algebra import COLUMNS, bound, bound_tables, catalog, intervals, run

STAR = ("select * from orders where amt > 1", COLUMNS["orders"])
# the subquery's table comes first in reading order, though the join's is nearer the top
SUBQUERY_FIRST = (
    "select o.id, c.tier from (select id, cid from orders where amt > 0) o "
    "join customers c on o.cid = c.id",
    ("id", "tier"),
)
JOIN = ("select o.id, c.tier from orders o join customers c on o.cid = c.id", ("id", "tier"))
# (old rows, new rows): orders (id, cid, amt), customers (id, tier)
STATES = {
    "orders": ([(1, 1, 2), (2, 2, 3), (3, 1, 1)], [(1, 1, 5), (3, 1, 1), (4, 2, 2)]),
    "customers": ([(1, 7), (2, 8)], [(1, 9), (2, 8), (3, 7)]),
}
BOTH = {"orders", "customers"}


def define(view: tuple[str, tuple[str, ...]]) -> ViewDefinition:
    return read_view_definition(catalog(*view), "shop", "v", "s")


def signed(net: Counter) -> dict:
    return {row: n for row, n in net.items() if n}


def rows_of(view: ViewDefinition, orders: list[dict], customers: list[dict]) -> Counter:
    """The view's own definition over these rows of its tables."""
    sql = view.sql.replace("`shop`.", "")
    return Counter(run(sql, {"orders": orders, "customers": customers}))


def difference(new: Counter, old: Counter) -> dict:
    new = Counter(new)
    new.subtract(old)
    return signed(new)


def expected_change(view: ViewDefinition, tables: dict) -> dict:
    """The view's rows at the tables' new states less its rows at their old ones."""
    new = rows_of(view, tables["orders_new"], tables["customers_new"])
    return difference(new, rows_of(view, tables["orders_old"], tables["customers_old"]))


def net_of(feed: str, columns: int, tables: dict) -> dict:
    """A feed's rows, inserts +1 and deletes -1, its terms run one by one (the executor
    confuses UNION ALL branches that reuse one alias)."""
    net: Counter = Counter()
    for term in feed.split("\nunion all\n"):
        for row in run(bound(term), tables):
            net[row[:columns]] += 1 if row[columns] == "insert" else -1
    return signed(net)


def feed_net(view: ViewDefinition, tables: dict, changed: set[str], **options) -> dict:
    feed = view_feed_sql(view, intervals(view, changed), **options)
    return net_of(feed, len(view.columns), tables)


def inserted(tables: dict, table: str) -> list[dict]:
    """The table's rows at its offset plus the rows its change set inserts."""
    new = [row for row in tables[f"{table}_changes"] if row["_change_type"] == "insert"]
    return tables[f"{table}_old"] + [{k: v for k, v in row.items() if k in COLUMNS[table]}
                                     for row in new]  # fmt: skip


@pytest.mark.parametrize("as_updates", [False, True])
def test_a_view_over_star_reads_its_new_images_as_inserts_and_old_as_deletes(as_updates) -> None:
    view = define(STAR)
    tables = bound_tables(STATES, as_updates)
    assert feed_net(view, tables, {"orders"}) == {
        (1, 1, 5): 1, (4, 2, 2): 1, (1, 1, 2): -1, (2, 2, 3): -1,
    }  # fmt: skip


def test_an_append_only_view_over_star_reports_inserts_and_never_updates() -> None:
    view = define(STAR)
    inserts = bound_tables(STATES, as_updates=False)
    assert feed_net(view, inserts, {"orders"}, append_only=True) == {(1, 1, 5): 1, (4, 2, 2): 1}
    updates = bound_tables(STATES, as_updates=True)
    assert feed_net(view, updates, {"orders"}, append_only=True) == {}


@pytest.mark.parametrize("changed", [{"orders"}, {"customers"}, BOTH])
def test_a_subquery_read_before_a_join_nets_to_the_views_change(changed: set[str]) -> None:
    view = define(SUBQUERY_FIRST)
    states = {t: (old, new if t in changed else old) for t, (old, new) in STATES.items()}
    tables = bound_tables(states, as_updates=False)
    expected = difference(
        rows_of(view, tables["orders_new"], tables["customers_new"]),
        rows_of(view, tables["orders_old"], tables["customers_old"]),
    )
    assert expected  # each case changes the view
    assert feed_net(view, tables, changed) == expected


@pytest.mark.parametrize("pinned, suffix", [(True, "new"), (False, "old")])
def test_the_views_state_reads_every_table_at_its_pin_or_its_offset(pinned, suffix) -> None:
    view = define(SUBQUERY_FIRST)
    tables = bound_tables(STATES, as_updates=False)
    state = run(bound(view_state_sql(view, intervals(view, BOTH), pinned)), tables)
    expected = rows_of(view, tables[f"orders_{suffix}"], tables[f"customers_{suffix}"])
    assert Counter(state) == expected


def test_a_terms_predicate_filters_the_other_tables_scan_in_that_term_only() -> None:
    """With `false` on customers in the term of orders, only the term of customers is left:
    orders at their pin joined with the customers' change; and the other way round."""
    view = define(JOIN)
    tables = bound_tables(STATES, as_updates=True)
    old_orders, new_orders = tables["orders_old"], tables["orders_new"]
    old_customers, new_customers = tables["customers_old"], tables["customers_new"]
    assert feed_net(view, tables, BOTH, prunes={0: {1: "false"}}) == difference(
        rows_of(view, new_orders, new_customers), rows_of(view, new_orders, old_customers)
    )
    assert feed_net(view, tables, BOTH, prunes={1: {0: "false"}}) == difference(
        rows_of(view, new_orders, old_customers), rows_of(view, old_orders, old_customers)
    )


def test_an_append_only_terms_predicate_filters_the_grown_table_before_it() -> None:
    """In the term of customers, orders are read at their offset plus their inserts; `false`
    there leaves only the term of orders."""
    view = define(JOIN)
    tables = bound_tables(STATES, as_updates=False)
    whole = feed_net(view, tables, BOTH, append_only=True)
    pruned = feed_net(view, tables, BOTH, append_only=True, prunes={1: {0: "false"}})
    old_customers = tables["customers_old"]
    assert pruned == difference(
        rows_of(view, inserted(tables, "orders"), old_customers),
        rows_of(view, tables["orders_old"], old_customers),
    )
    assert pruned != whole  # the term of customers had rows of its own


def test_the_change_range_is_the_views_signed_feed_up_to_the_latest_pin() -> None:
    view = define(JOIN)
    spans = intervals(view, {"customers"})  # orders stay at their offset
    tables = bound_tables({**STATES, "orders": (STATES["orders"][0],) * 2}, as_updates=False)
    change = view_change_range(view, ("id",), spans)
    assert (change.source, change.columns, change.unique_key) == (
        "shop.v",
        ("id", "tier"),
        ("id",),
    )
    assert (change.start, change.end) == (0, 2)
    # customer 1's tier went from 7 to 9: its orders 1 and 3 go out and come back
    assert net_of(change.feed, 2, tables) == {(1, 7): -1, (3, 7): -1, (1, 9): 1, (3, 9): 1}
    # the term of customers reads only orders of customer 2, who did not change
    pruned = view_change_range(view, ("id",), spans, prunes={1: {0: "`cid` = 2"}})
    assert net_of(pruned.feed, 2, tables) == {}


def test_a_view_that_reads_no_table_has_an_empty_range_ending_at_version_0() -> None:
    view = define(("select 1 as one", ("one",)))
    change = view_change_range(view, (), {})
    assert (change.start, change.end) == (0, 0)
    assert run(change.feed, {}) == []


def test_a_definition_whose_tables_do_not_match_its_query_is_refused() -> None:
    """One table listed for a join of two: no reference is left unread or read as another."""
    joined = define(JOIN)
    short = ViewDefinition("shop.v", joined.query, joined.tables[:1], joined.columns)
    spans = intervals(joined, BOTH)
    with pytest.raises(ValueError, match="zip"):
        view_state_sql(short, spans, pinned=True)
    with pytest.raises(ValueError, match="zip"):
        view_feed_sql(short, spans)


def test_a_qualified_star_of_the_changed_table_is_read_by_type() -> None:
    view = define(
        ("select o.*, c.tier from orders o join customers c on o.cid = c.id",
         ("id", "cid", "amt", "tier"))
    )  # fmt: skip
    tables = bound_tables(STATES, as_updates=True)
    assert feed_net(view, tables, BOTH) == expected_change(view, tables)


def test_a_table_with_a_location_reads_its_change_feed_by_path() -> None:
    view = define(STAR)
    [(name, span)] = intervals(view, {"orders"}).items()
    located = replace(span, table=replace(span.table, location="s3://lake/orders"))
    feed = view_feed_sql(view, {name: located})
    by_path = re.sub(r"TABLE_CHANGES_BY_PATH\('s3://lake/orders', 2, 2\)", "orders_changes",
                     feed, flags=re.I)  # fmt: skip
    assert "orders_changes" in by_path and "TABLE_CHANGES(" not in by_path.upper()
    tables = bound_tables(STATES, as_updates=False)
    assert net_of(by_path, 3, tables) == {(1, 1, 5): 1, (4, 2, 2): 1, (1, 1, 2): -1, (2, 2, 3): -1}


def test_an_append_only_star_of_a_later_table_joins_the_grown_tables_before_it() -> None:
    """The term of customers reads them by type (`c.*`) and orders at their offset plus their
    inserts: the seed's rule, the view over offsets plus inserts less the view at offsets."""
    view = define(
        ("select c.*, o.id as oid from orders o join customers c on o.cid = c.id",
         ("id", "tier", "oid"))
    )  # fmt: skip
    tables = bound_tables(STATES, as_updates=False)
    grown = rows_of(view, inserted(tables, "orders"), inserted(tables, "customers"))
    old = rows_of(view, tables["orders_old"], tables["customers_old"])
    assert feed_net(view, tables, BOTH, append_only=True) == difference(grown, old)
