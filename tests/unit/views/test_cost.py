"""The estimate of a view stream's next read against a rebuild, without a JVM: the bytes a
pruned scan reads come from Spark's EXPLAIN COST, the rest from the tables' sizes; terms read
only their own UNION ALL branch."""

import pytest

from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.cost import (
    NO_KEYS,
    REBUILD_FRACTION,
    TableSizes,
    ViewCost,
    ViewPlan,
    readable,
    recompute_cost,
    scanned_bytes,
)
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition
from tests.unit.views.test_algebra import PIN, catalog, intervals, view_of

PLAN = (  # as Spark 4.2 with Delta prints it, once Delta has skipped files
    "== Optimized Logical Plan ==\n"
    "Filter ((customer_id#9L >= 10) AND (customer_id#9L <= 20)), "
    "Statistics(sizeInBytes=414.8 KiB)\n"
    "+- Relation spark_catalog.shop.orders[id#8L,customer_id#9L] parquet, "
    "Statistics(sizeInBytes=414.8 KiB)\n"
)


def explaining(size: str, asked: list[str] | None = None):
    def run(sql: str) -> list[Row]:
        if asked is not None:
            asked.append(sql)
        if sql.startswith("describe detail"):
            return [{"sizeInBytes": 1000 if "orders" in sql else 100}]
        assert sql.startswith("explain cost select * from "), sql
        return [{"plan": PLAN.replace("414.8 KiB", size)}]

    return run


def test_the_scanned_bytes_are_the_relations_size_after_skipping() -> None:
    asked: list[str] = []
    run = explaining("414.8 KiB", asked)
    assert scanned_bytes(run, "`shop`.`orders`", 3, "`customer_id` between 10 and 20") == 424755
    assert asked == [
        "explain cost select * from `shop`.`orders` version as of 3 "
        "where `customer_id` between 10 and 20"
    ]
    assert scanned_bytes(explaining("12 B"), "t", 1, "true") == 12
    assert scanned_bytes(explaining("2.0 GiB"), "t", 1, "true") == 2 * 2**30


def test_a_plan_without_a_relation_size_is_an_error_naming_the_table() -> None:
    with pytest.raises(ValueError, match="No relation size in the plan of t"):
        scanned_bytes(lambda sql: [{"plan": "== Physical Plan =="}], "t", 1, "true")


def test_sizes_read_as_spark_prints_them() -> None:
    assert readable(12) == "12 B"
    assert readable(3 * 2**20 + 2**19) == "3.5 MiB"
    assert readable(2**30) == "1.0 GiB"


def test_a_pruned_term_counts_its_scan_and_an_unpruned_one_the_whole_table() -> None:
    view = view_of("join")  # orders o join customers c on o.cid = c.id
    spans = intervals(view, {"customers"})  # only customers changed: its term reads orders
    sizes = TableSizes(explaining("250 B"))
    plan = ViewPlan(view, spans, {1: {0: "`cid` between 1 and 2"}}, sizes)
    cost = plan.cost(explaining("250 B"))
    assert (cost.incremental_bytes, cost.rebuild_bytes) == (250, 1100)
    assert not cost.rebuild_is_cheaper
    unpruned = ViewPlan(view, spans, {}, sizes).cost(explaining("250 B"))
    assert (unpruned.incremental_bytes, unpruned.rebuild_bytes) == (1000, 1100)
    assert unpruned.rebuild_is_cheaper
    assert unpruned.reason() == (
        "the change would scan 91% of what a rebuild scans (1000 B of 1.1 KiB)"
    )


def test_a_term_reads_only_its_own_union_branch() -> None:
    view = view_of("union_all")  # orders where ... union all customers
    both = intervals(view, {"orders", "customers"})
    cost = ViewPlan(view, both, {}, TableSizes(explaining("1 B"))).cost(explaining("1 B"))
    assert (cost.incremental_bytes, cost.rebuild_bytes) == (0, 1100)


def test_the_threshold_is_half_of_a_rebuild() -> None:
    assert ViewCost(50, 100).rebuild_is_cheaper and REBUILD_FRACTION == 0.5
    assert not ViewCost(49, 100).rebuild_is_cheaper
    assert not ViewCost(0, 0).rebuild_is_cheaper


def test_a_refresh_recomputing_groups_also_reads_the_whole_input() -> None:
    """A materialized view whose refresh recomputes groups (a MIN or MAX, COUNT(DISTINCT),
    HAVING) reads its input whole beside the terms: never less than a rebuild scans."""
    view = view_of("join")
    spans = intervals(view, {"customers"})
    sizes = TableSizes(explaining("250 B"))
    pruned = ViewPlan(view, spans, {1: {0: "`cid` between 1 and 2"}}, sizes)
    cost = pruned.cost(explaining("250 B"), recomputes=True)
    assert (cost.incremental_bytes, cost.rebuild_bytes) == (1350, 1100)
    assert cost.rebuild_is_cheaper
    assert cost.reason() == (
        "the change would scan 123% of what a rebuild scans (1.3 KiB of 1.1 KiB), "
        "recomputing groups from the whole input"
    )
    kept = pruned.cost(explaining("250 B"))  # aggregates kept from the change: the terms
    assert (kept.incremental_bytes, kept.recomputes) == (250, False)


def test_an_outer_joins_refresh_reads_each_other_table_per_changed_table_then_all() -> None:
    """A materialized view over an outer join: each changed table's rows joined with every
    other table, whole, then every table read again to recompute the groups; nothing
    estimated under the model's rebuild_min_bytes."""
    sizes = TableSizes(explaining("250 B"))  # orders 1000 B, customers 100 B
    tables = ["shop.customers", "shop.orders"]
    cost = recompute_cost(sizes, tables, ["shop.orders"], min_bytes=1100)
    assert cost is not None and (cost.incremental_bytes, cost.rebuild_bytes) == (1200, 1100)
    assert cost.rebuild_is_cheaper and cost.recomputes
    both = recompute_cost(sizes, tables, tables, min_bytes=0)
    assert both is not None and both.incremental_bytes == 2200
    assert recompute_cost(sizes, tables, ["shop.orders"], min_bytes=1101) is None


def test_a_recompute_through_the_group_keys_ranges_counts_what_they_leave() -> None:
    """A materialized view over one table whose group key is an integer column: its recompute
    reads the table under the change's ranges of that key, and the estimate counts that scan
    (after Delta's skipping) instead of the whole input."""
    view_sql = "select cid as _mv_c0, amt as _mv_c1 from orders"
    view = read_view_definition(catalog(view_sql, ("_mv_c0", "_mv_c1")), "shop", "v", "s")
    asked: list[str] = []
    run = explaining("120 B", asked)
    plan = ViewPlan(view, intervals(view, {"orders"}), {}, TableSizes(run))
    cost = plan.cost(run, recomputes=True, ranged="(`cid` between 3 and 5)")
    assert (cost.incremental_bytes, cost.rebuild_bytes, cost.recomputes) == (120, 1000, False)
    assert not cost.rebuild_is_cheaper
    assert (
        f"explain cost select * from `shop`.`orders` version as of {PIN} "
        "where (`cid` between 3 and 5)"
    ) in asked
    # a change that leaves the input's rows as they were recomputes no group: nothing read
    nothing = plan.cost(run, recomputes=True, ranged=NO_KEYS)
    assert (nothing.incremental_bytes, nothing.rebuild_is_cheaper) == (0, False)
