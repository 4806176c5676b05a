"""A view stream's path, without a JVM: which joins of its next read are pruned by the change
sets' key ranges, the rebuild a build is offered (or a 'strict' model refused) when the
estimate says it is cheaper, and the ranges of a clustered mirror's column (the lines
explain_stream prints for it: test_view_explain.py).

The fake catalog is test_view.py's Shop (the view shop.paired over two Delta tables at version
3) or, for a view with more columns, test_algebra.py's; on top of it, Costed answers the
tables' sizes (DESCRIBE DETAIL), a pruned scan's size (EXPLAIN COST, as test_cost.py's plan)
and a change set's key ranges, from its change rows.
"""

import re
from dataclasses import replace

import pytest

from dbt.adapters.spark_streams.streams.builds.build import ColumnRanges, RebuildOffer, StreamBuild
from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.view_path import (
    consider_rebuild,
    estimate,
    offer_column_ranges,
    plan_view_read,
)
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.cost import ViewCost, ViewPlan
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition
from dbt.adapters.spark_streams.streams.views.pruning import AUTO_MIN_JOIN_BYTES
from tests.unit.kinds.test_view import CONSUMER, NAME, Shop
from tests.unit.views.test_algebra import catalog, intervals
from tests.unit.views.test_cost import PLAN

MIRROR_VIEW = "select o.id, o.cid, c.tier from orders o join customers c on o.cid = c.id"
ORDERS, CUSTOMERS = "`shop`.`orders`", "`shop`.`customers`"


def key_ranges(changes: dict[str, list[dict]], sql: str) -> list[Row]:
    """A key ranges query's rows, as the real query gives them with ranges to spare: one range
    per run of consecutive values of the change set's column."""
    table = re.search(r"TABLE_CHANGES\('`shop`\.`(\w+)`'", sql, flags=re.I)
    column = re.search(r"select distinct `(\w+)` as k", sql)
    assert table and column, sql
    values = sorted({row[column.group(1)] for row in changes[table.group(1)]})
    rows: list[Row] = []
    for value in values:
        if rows and rows[-1]["high"] == value - 1:
            rows[-1]["high"] = value
        else:
            rows.append({"low": value, "high": value, "has_null": False})
    return rows


class Costed(Shop):
    """Shop whose tables hold `sizes` bytes, whose pruned scans read `scanned` bytes, and whose
    change sets hold `changes` rows (by table name)."""

    def __init__(self, sizes=None, scanned=None, changes=None) -> None:
        super().__init__()
        self.sizes = sizes or {}
        self.scanned = scanned or {}
        self.changes = changes or {}

    def __call__(self, sql: str) -> list[Row]:
        table = sql.split("`")[3] if sql.count("`") >= 4 else ""
        if sql.startswith("describe detail"):
            self.statements.append(sql)
            return [{"id": f"id-{table}", "sizeInBytes": self.sizes.get(table, 0)}]
        if sql.startswith("explain cost"):
            self.statements.append(sql)
            return [{"plan": PLAN.replace("414.8 KiB", f"{self.scanned[table]} B")}]
        if "select distinct" in sql:
            self.statements.append(sql)
            return key_ranges(self.changes, sql)
        return super().__call__(sql)


def mirror_view():
    """orders o (id, cid, amt) join customers c (id, tier) on o.cid = c.id."""
    return read_view_definition(catalog(MIRROR_VIEW, ("id", "cid", "tier")), "shop", "v", NAME)


def typed(view, changed: set[str], types: str = "bigint", case=str.lower):
    """test_algebra's intervals (offset 1, pin 2 where changed), with DESCRIBE's types."""
    spans = intervals(view, changed)
    return {
        name: replace(
            span,
            table=replace(
                span.table,
                columns=tuple(case(c) for c in span.table.columns),
                column_types=(types,) * len(span.table.columns) if types else (),
            ),
        )
        for name, span in spans.items()
    }


def config(**settings) -> ConsumerConfig:
    return ConsumerConfig.from_model_config("paired_mirror", {"unique_key": "id", **settings})


CHANGES = {"orders": [{"cid": 4}, {"cid": 5}, {"cid": 9}], "customers": [{"id": 7}]}


def test_a_changed_tables_term_reads_the_other_table_through_its_change_sets_ranges() -> None:
    view, run = mirror_view(), Costed({"orders": 600, "customers": 400}, changes=CHANGES)
    spans = typed(view, {"orders"})
    read = plan_view_read(run, True, view, spans)
    assert read.prunes == {0: {1: "(`id` between 4 and 5 or `id` between 9 and 9)"}}
    assert (read.view, read.intervals, read.view_bytes) == (view, spans, 1000)
    asked = len(run.statements)
    assert read.ranges is not None and read.ranges(0, "cid")[0] == {
        "low": 4, "high": 5, "has_null": False
    }  # fmt: skip
    assert len(run.statements) == asked  # the ranges the prunes read, kept for the build
    both = plan_view_read(run, True, view, typed(view, {"orders", "customers"}))
    assert both.prunes[1] == {0: "(`cid` between 7 and 7)"}


def test_key_ranges_false_prunes_nothing_and_reads_no_ranges() -> None:
    view, run = mirror_view(), Costed(changes=CHANGES)
    assert plan_view_read(run, False, view, typed(view, {"orders"})).prunes == {0: {}}
    assert run.statements == []


@pytest.mark.parametrize(
    ("size", "pruned"), [(AUTO_MIN_JOIN_BYTES, True), (AUTO_MIN_JOIN_BYTES - 1, False)]
)
def test_auto_key_ranges_prune_tables_of_the_threshold_or_more(size: int, pruned: bool) -> None:
    view, run = mirror_view(), Costed({"customers": size}, changes=CHANGES)
    read = plan_view_read(run, None, view, typed(view, {"orders"}))
    assert (1 in read.prunes[0]) is pruned
    assert run.statements[0] == f"describe detail {CUSTOMERS}"


def test_a_view_without_equi_joins_or_unchanged_tables_has_no_terms_to_prune() -> None:
    union = "select id, amt as value from orders union all select id, tier from customers"
    view = read_view_definition(catalog(union, ("id", "value")), "shop", "v", NAME)
    run = Costed(changes=CHANGES)
    assert plan_view_read(run, True, view, typed(view, {"orders"})).prunes == {}
    joined = mirror_view()
    assert set(plan_view_read(run, True, joined, typed(joined, {"customers"})).prunes) == {1}


def test_column_types_are_matched_by_name_whatever_its_case() -> None:
    view, run = mirror_view(), Costed(changes=CHANGES)
    read = plan_view_read(run, True, view, typed(view, {"orders"}, case=str.upper))
    assert read.prunes == {0: {1: "(`id` between 4 and 5 or `id` between 9 and 9)"}}


def test_a_table_whose_types_are_unknown_or_not_integers_is_read_whole() -> None:
    view, run = mirror_view(), Costed(changes=CHANGES)
    assert plan_view_read(run, True, view, typed(view, {"orders"}, types="")).prunes == {0: {}}
    assert plan_view_read(run, True, view, typed(view, {"orders"}, "string")).prunes == {0: {}}
    assert run.statements == []


def plan(sizes: dict[str, int], scanned: int, changed=("orders",)) -> tuple[Costed, ViewPlan]:
    """The read of the mirror view, key_ranges true; a pruned scan reads `scanned` bytes."""
    view = mirror_view()
    run = Costed(sizes, {"orders": scanned, "customers": scanned}, CHANGES)
    return run, plan_view_read(run, True, view, typed(view, set(changed)))


def test_the_estimate_is_skipped_under_the_models_rebuild_min_bytes() -> None:
    run, read = plan({"orders": 600, "customers": 400}, 300)
    assert estimate(run, config(rebuild_min_bytes=1001), read) is None
    assert not any(s.startswith("explain cost") for s in run.statements)
    assert estimate(run, config(rebuild_min_bytes=1000), read) == ViewCost(300, 1000)
    assert run.statements[-1] == (
        f"explain cost select * from {CUSTOMERS} version as of 1 "
        "where (`id` between 4 and 5 or `id` between 9 and 9)"
    )


def test_a_materialized_view_recomputing_groups_counts_its_whole_input() -> None:
    run, read = plan({"orders": 600, "customers": 400}, 300)
    recomputing = replace(config(rebuild_min_bytes=1000), recomputes_input=True)
    assert estimate(run, recomputing, read) == ViewCost(1300, 1000, recomputes=True)


def consumer_build(consumer: str | None = CONSUMER, **settings) -> StreamBuild:
    return StreamBuild(consumer, "analytics", "`analytics`.`paired_mirror`", True, False, True,
                       config=config(rebuild_min_bytes=0, **settings))  # fmt: skip


def considered(build: StreamBuild, scanned: int = 1500) -> StreamBuild:
    """consider_rebuild on a view of 2000 B whose change of orders scans `scanned` bytes."""
    run, read = plan({"orders": 1000, "customers": 1000}, scanned)
    consider_rebuild(run, build, NAME, read, "the stream's sql", "the view's rows")
    return build


CHEAPER = "the change would scan 75% of what a rebuild scans (1.5 KiB of 2.0 KiB)"


def test_an_apply_changes_model_is_offered_a_rebuild_when_it_is_cheaper() -> None:
    offer = considered(consumer_build()).rebuild_offer
    assert offer == RebuildOffer(NAME, CHEAPER, "the stream's sql", "the view's rows")
    assert considered(consumer_build(), scanned=999).rebuild_offer is None  # 49.95%
    assert considered(consumer_build(), scanned=1000).rebuild_offer is not None  # 50%
    big = consumer_build()
    big.config = replace(big.config, rebuild_min_bytes=2001)
    assert considered(big).rebuild_offer is None


def test_no_rebuild_is_offered_to_other_strategies_peeks_or_builds_without_config() -> None:
    assert considered(consumer_build(incremental_strategy="merge")).rebuild_offer is None
    assert considered(consumer_build(consumer=None)).rebuild_offer is None
    bare = consumer_build()
    bare.config = None
    assert considered(bare).rebuild_offer is None


def test_a_strict_model_fails_when_a_rebuild_is_cheaper_and_builds_when_not() -> None:
    for strategy in ("apply_changes", "merge"):
        strict = consumer_build(incremental="strict", incremental_strategy=strategy)
        with pytest.raises(StreamError) as raised:
            considered(strict)
        assert raised.value.msg == (
            f"Model paired_mirror: stream {NAME} on view shop.v would be cheaper to rebuild: "
            f"{CHEAPER}. The model's incremental is 'strict', so nothing was written and no "
            "offset moved. Cluster the view's tables by their join keys so the change reads "
            "fewer files, or set incremental='auto' to let such builds rebuild the target."
        )
    assert considered(consumer_build(incremental="strict"), scanned=999).rebuild_offer is None


def test_a_materialized_view_refreshing_incrementally_only_names_its_own_settings() -> None:
    strict = consumer_build(incremental="strict")
    assert strict.config is not None
    strict.config = replace(strict.config, materialized_view=True, recomputes_input=True)
    with pytest.raises(StreamError) as raised:
        considered(strict, scanned=0)
    assert raised.value.msg == (
        "Model paired_mirror would refresh fully: the change would scan 100% of what a rebuild "
        "scans (2.0 KiB of 2.0 KiB), recomputing groups from the whole input. Its refresh is "
        "'incremental', so nothing was written and no offset moved. Set refresh: 'auto' to "
        "let such refreshes run the whole query, or set rebuild_min_bytes above its input's "
        "2.0 KiB to refresh it incrementally whatever it reads."
    )


def ranges_build(**settings) -> StreamBuild:
    settings = {"liquid_clustered_by": "cid", **settings}
    return consumer_build(**settings)


def test_a_mirror_clustered_by_a_join_column_is_offered_its_ranges() -> None:
    build = ranges_build()
    _, read = plan({}, 0, changed=("orders", "customers"))
    offer_column_ranges(build, NAME, read)
    # orders' own cid, and customers' id, which its term joins to o.cid
    assert build.column_ranges == ColumnRanges(NAME, "cid", [
        {"low": 4, "high": 5, "has_null": False}, {"low": 9, "high": 9, "has_null": False},
        {"low": 7, "high": 7, "has_null": False},
    ])  # fmt: skip
    alone = ranges_build()
    offer_column_ranges(alone, NAME, plan({}, 0, changed=("customers",))[1])
    assert alone.column_ranges == ColumnRanges(NAME, "cid", [
        {"low": 7, "high": 7, "has_null": False}
    ])  # fmt: skip


def test_no_ranges_are_offered_when_the_change_sets_cannot_tell_them() -> None:
    _, read = plan({}, 0)
    for build in (consumer_build(), ranges_build(liquid_clustered_by="tier")):
        offer_column_ranges(build, NAME, read)  # not clustered; tier is not orders' to tell
        assert build.column_ranges is None
    unread = ranges_build()
    offer_column_ranges(unread, NAME, replace(read, ranges=None))
    assert unread.column_ranges is None
    bare = ranges_build()
    bare.config = None
    offer_column_ranges(bare, NAME, read)
    assert bare.column_ranges is None
