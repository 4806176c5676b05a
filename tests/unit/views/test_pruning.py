"""Join-side pruning without a JVM: which equalities of a view join two table references, and
that the view's change feed with the other tables' scans pruned by the change set's ranges
nets to exactly what it nets to without them (on sqlglot's Python executor, as
test_algebra.py checks the algebra itself)."""

import re
from collections import Counter

from hypothesis import given

from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.algebra import change_rows_sql
from dbt.adapters.spark_streams.streams.views.pruning import (
    ChangeRanges,
    EquiJoin,
    PruneInputs,
    Prunes,
    equi_joins,
    term_prunes,
)
from tests.unit.views.test_algebra import (
    CHANGES,
    COLUMNS,
    NO_SHRINK,
    bound,
    bound_tables,
    changed_tables,
    feed_net,
    intervals,
    run,
    view_of,
)


def test_the_equalities_between_two_table_references_are_found_both_ways() -> None:
    both_ways = [EquiJoin(0, "cid", 1, "id"), EquiJoin(1, "id", 0, "cid")]
    assert equi_joins(view_of("join")) == both_ways
    assert equi_joins(view_of("comma_join")) == equi_joins(view_of("join"))  # in the WHERE
    assert equi_joins(view_of("self_join")) == [
        EquiJoin(0, "cid", 1, "cid"),
        EquiJoin(1, "cid", 0, "cid"),
    ]
    assert equi_joins(view_of("union_all")) == []
    assert equi_joins(view_of("nested")) == equi_joins(view_of("join"))


def ranges_from(tables: dict[str, list[dict]]):
    """A `run` that answers a key ranges query from the change set it names: one range per
    distinct value, as the real query gives when it has ranges to spare."""

    def answer(sql: str) -> list[Row]:
        table = re.search(r"TABLE_CHANGES\('`shop`\.`(\w+)`'", sql, flags=re.I)
        column = re.search(r"select distinct `(\w+)` as k", sql)
        assert table and column, sql
        values = {row[column.group(1)] for row in tables[f"{table.group(1)}_changes"]}
        return [{"low": v, "high": v, "has_null": False} for v in sorted(values)]

    return answer


def all_prunes(kind: str, tables: dict[str, list[dict]], changed: set[str]) -> dict[int, Prunes]:
    view = view_of(kind)
    spans = intervals(view, changed)
    inputs = PruneInputs(
        ranges=ChangeRanges(
            ranges_from(tables), lambda position: change_rows_sql(spans[view.tables[position]])
        ),
        column_type=lambda position, column: "bigint",
        worth_pruning=lambda position: True,
    )
    joins = equi_joins(view)
    return {
        index: term_prunes(joins, index, inputs)
        for index, name in enumerate(view.tables)
        if spans[name].changed
    }


@NO_SHRINK
@given(**CHANGES)
def test_pruned_terms_net_to_the_same_change(
    kind: str, drawn: dict[str, tuple], changed: set[str], as_updates: bool
) -> None:
    tables = changed_tables(drawn, changed, as_updates)
    view = view_of(kind)
    spans = intervals(view, changed)
    prunes = all_prunes(kind, tables, changed)
    pruned = feed_net(view, spans, tables, prunes=prunes)
    assert pruned == feed_net(view, spans, tables)


def test_a_pruned_term_reads_the_other_table_through_the_ranges() -> None:
    tables = bound_tables({"orders": ([(1, 2, 3)], [(1, 3, 3)]), "customers": ([], [])}, False)
    prunes = all_prunes("join", tables, {"orders"})
    assert prunes == {0: {1: "(`id` between 2 and 2 or `id` between 3 and 3)"}}
    view = view_of("join")
    term = bound(change_rows_sql(intervals(view, {"orders"})[view.tables[0]]))
    assert "orders_changes" in term
    assert Counter(run(term, tables)) == Counter({(1, 2, 3, "delete"): 1, (1, 3, 3, "insert"): 1})


def test_a_change_set_without_values_joins_nothing() -> None:
    tables = bound_tables({"orders": ([], []), "customers": ([], [])}, False)
    prunes = all_prunes("join", tables, {"orders"})
    assert prunes == {0: {1: "false"}}


def test_only_integer_columns_on_both_sides_are_ranged() -> None:
    view = view_of("join")
    spans = intervals(view, {"orders"})
    asked: list[str] = []
    ranges = ChangeRanges(
        lambda sql: asked.append(sql) or [],
        lambda position: change_rows_sql(spans[view.tables[position]]),
    )
    inputs = PruneInputs(
        ranges=ranges,
        column_type=lambda position, column: "string" if position == 1 else "bigint",
        worth_pruning=lambda position: True,
    )
    assert term_prunes(equi_joins(view), 0, inputs) == {}
    assert asked == []
    small = PruneInputs(ranges, lambda p, c: "int", lambda position: False)
    assert term_prunes(equi_joins(view), 0, small) == {}
    assert asked == [] and set(COLUMNS) == {"orders", "customers"}
