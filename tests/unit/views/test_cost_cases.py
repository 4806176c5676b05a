"""The estimate of a view stream's next read on views the other cost tests do not draw: every
term's scans add up, each pruned scan is explained at the version its term reads, and a term
reads no table across any UNION ALL from it, however deep the branches nest."""

import pytest

from dbt.adapters.spark_streams.streams.views.cost import TableSizes, ViewPlan, scanned_bytes
from tests.unit.views.test_algebra import intervals
from tests.unit.views.test_algebra_cases import JOIN, define
from tests.unit.views.test_cost import explaining

BOTH = {"orders", "customers"}


def cost_of(view_sql: str, columns: tuple[str, ...], changed: set[str], prunes: dict, asked=None):
    """The cost of the view's next read; orders are 1000 bytes, customers 100, and a pruned
    scan 250."""
    view = define((view_sql, columns))
    run = explaining("250 B", asked)
    return ViewPlan(view, intervals(view, changed), prunes, TableSizes(run)).cost(run)


def test_every_terms_whole_tables_add_up() -> None:
    cost = cost_of(*JOIN, BOTH, {})  # orders' term reads customers, customers' term orders
    assert (cost.incremental_bytes, cost.rebuild_bytes) == (1100, 1100)


def test_an_unpruned_table_does_not_end_its_terms_count() -> None:
    view_sql = (
        "select a.id, c.tier from orders a join customers c on a.cid = c.id "
        "join orders b on b.cid = c.id"
    )
    # orders' two terms: a's reads customers whole and b pruned; b's reads a and customers whole
    cost = cost_of(view_sql, ("id", "tier"), {"orders"}, {0: {2: "`cid` = 1"}})
    assert cost.incremental_bytes == 100 + 250 + 1000 + 100


def test_each_pruned_scan_is_explained_at_the_version_its_term_reads() -> None:
    """The term of orders reads customers at their offset (1); the term of customers reads
    orders at their pin (2)."""
    asked: list[str] = []
    prunes = {0: {1: "`id` = 1"}, 1: {0: "`cid` = 1"}}
    cost = cost_of(*JOIN, BOTH, prunes, asked)
    assert cost.incremental_bytes == 500
    assert [sql for sql in asked if sql.startswith("explain")] == [
        "explain cost select * from `shop`.`customers` version as of 1 where `id` = 1",
        "explain cost select * from `shop`.`orders` version as of 2 where `cid` = 1",
    ]


def test_a_term_reads_only_its_branch_when_a_subquery_is_read_first() -> None:
    view_sql = (
        "select o.id, c.tier from (select id, cid from orders) o join customers c "
        "on o.cid = c.id union all select id, amt from orders"
    )
    cost = cost_of(view_sql, ("id", "tier"), {"orders"}, {})
    assert (cost.incremental_bytes, cost.rebuild_bytes) == (100, 2100)


def test_a_term_reads_nothing_of_three_union_all_branches() -> None:
    view_sql = "select id, amt from orders union all select id, tier from customers " + (
        "union all select id, cid from orders"
    )
    cost = cost_of(view_sql, ("id", "value"), {"orders"}, {})
    assert (cost.incremental_bytes, cost.rebuild_bytes) == (0, 2100)


def test_a_plan_without_a_size_is_quoted_up_to_500_characters() -> None:
    plan = "== Physical Plan ==" + "x" * 600
    with pytest.raises(ValueError) as raised:
        scanned_bytes(lambda sql: [{"plan": plan}], "t", 1, "true")
    assert str(raised.value) == f"No relation size in the plan of t: {plan[:500]}"
