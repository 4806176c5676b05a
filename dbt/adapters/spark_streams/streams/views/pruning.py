"""Join-side pruning: the other tables of a view's join term read only where a changed row can
join them.

A term of a view's changes (algebra.py) joins one table's change set with the other tables
read whole, at a version. Delta has no index, so a change of a few customers scans every
order to find theirs. But Delta skips files by their min / max statistics for a literal
predicate on the scan, and a table clustered by its join key (liquid clustering, Z-order, or
rows written in key order) keeps each key in a few files. So before the term is read, the
change set's values of each equi-join column (`changed.x = other.y`, in an ON or the WHERE of
the select that joins them) are read as at most MOST_RANGES integer ranges (the same ranges a
MERGE's target gets, records/key_ranges.py), and `other.y between low and high or ...` goes on
the other table's scan. An equi-join keeps only rows whose `y` equals some changed `x`, and
every changed `x` lies in a range, so the predicate removes only rows the join drops anyway:
the term's rows are exactly those without it. A null never equals anything, so null `x`s add
nothing.

Reading the ranges reads the change set once more (a few tenths of a second, most of it the
change feed), so by default (`key_ranges: auto`) only tables of at least AUTO_MIN_JOIN_BYTES
get a predicate; `key_ranges: true` prunes every join, `false` none. Only integer columns are
ranged, as for a target; other joins read the other table whole.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlglot import exp

from dbt.adapters.spark_streams.streams.records.key_ranges import (
    MOST_RANGES,
    can_range,
    key_ranges_sql,
    target_predicate,
)
from dbt.adapters.spark_streams.streams.sql.quoting import quote
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql
from dbt.adapters.spark_streams.streams.views.definition import ViewDefinition

# 32 MiB: a scan of about a second on two cores; smaller tables are read whole.
AUTO_MIN_JOIN_BYTES = 32 * 2**20

# A term's predicates: the position of a table reference in the view -> its scan's predicate.
Prunes = dict[int, str]


@dataclass(frozen=True)
class EquiJoin:
    """`changed.column = other.other_column`, between the references at two positions."""

    changed: int
    column: str
    other: int
    other_column: str


def equi_joins(view: ViewDefinition) -> list[EquiJoin]:
    """Every equality between plain columns of two table references joined in one select,
    both ways round. Columns of nested views (subqueries) and unqualified columns are left
    out: their table is not certain from the text alone."""
    references = list(view.query.find_all(exp.Table, bfs=False))
    position = {id(table): index for index, table in enumerate(references)}
    found = []
    for select in view.query.find_all(exp.Select):
        aliases = table_aliases(select, position)
        for left, right in _column_equalities(select):
            ends = (aliases.get(left.table.lower()), aliases.get(right.table.lower()))
            if ends[0] is None or ends[1] is None or ends[0] == ends[1]:
                continue
            found.append(EquiJoin(ends[0], left.name, ends[1], right.name))
            found.append(EquiJoin(ends[1], right.name, ends[0], left.name))
    return found


def table_aliases(select: exp.Select, position: dict[int, int]) -> dict[str, int]:
    """The select's own FROM and JOIN items that are table references, by alias (or name)."""
    items = [select.args.get("from_"), *(select.args.get("joins") or [])]
    aliases = {}
    for item in items:
        if item is not None and isinstance(item.this, exp.Table) and id(item.this) in position:
            aliases[item.this.alias_or_name.lower()] = position[id(item.this)]
    return aliases


def _column_equalities(select: exp.Select) -> Iterator[tuple[exp.Column, exp.Column]]:
    """The qualified `a.x = b.y` conjuncts of the select's join conditions and WHERE."""
    conditions = [join.args.get("on") for join in select.args.get("joins") or []]
    where = select.args.get("where")
    conditions.append(where.this if where is not None else None)
    for condition in conditions:
        for conjunct in _conjuncts(condition):
            if not isinstance(conjunct, exp.EQ):
                continue
            left, right = conjunct.this, conjunct.expression
            columns = isinstance(left, exp.Column) and isinstance(right, exp.Column)
            if columns and left.table and right.table:
                yield left, right


def _conjuncts(condition: exp.Expr | None) -> Iterator[exp.Expr]:
    if condition is None:
        return
    node = condition.unnest()
    if isinstance(node, exp.And):
        yield from _conjuncts(node.this)
        yield from _conjuncts(node.expression)
    else:
        yield node


class ChangeRanges:
    """The change sets' values of a column as at most MOST_RANGES integer ranges, read once
    per (reference, column) in a build: pruning and the target's ranges (lineage.py) share
    them."""

    def __init__(self, run: RunSql, change_rows: Callable[[int], str]) -> None:
        self.run = run
        self.change_rows = change_rows
        self.known: dict[tuple[int, str], list[Row]] = {}

    def __call__(self, position: int, column: str) -> list[Row]:
        """Rows (low, high, has_null) of reference `position`'s change set on `column`."""
        key = (position, column.lower())
        if key not in self.known:
            query = key_ranges_sql(f"({self.change_rows(position)})", quote(column), MOST_RANGES)
            self.known[key] = self.run(query)
        return self.known[key]


@dataclass(frozen=True)
class PruneInputs:
    """What pruning reads of a build: each reference's change set ranges and column types,
    and whether a table is big enough to prune (`key_ranges` auto)."""

    ranges: Callable[[int, str], list[Row]]
    column_type: Callable[[int, str], str | None]
    worth_pruning: Callable[[int], bool]


def term_prunes(joins: list[EquiJoin], changed: int, inputs: PruneInputs) -> Prunes:
    """The predicates on the other tables' scans in the term where reference `changed` is the
    change set: one ranges query per joined column of the change set."""
    prunes: Prunes = {}
    for join in joins:
        if join.changed != changed or not inputs.worth_pruning(join.other):
            continue
        types = (
            inputs.column_type(changed, join.column),
            inputs.column_type(join.other, join.other_column),
        )
        if not all(can_range(data_type) for data_type in types):
            continue  # integers on both sides: a range compares as the join does
        rows = inputs.ranges(changed, join.column)
        predicate = target_predicate(quote(join.other_column), rows)
        # no ranges: the change set has no non-null value, and the join matches nothing
        predicate = predicate or "false"
        previous = prunes.get(join.other)
        prunes[join.other] = f"{previous} and {predicate}" if previous else predicate
    return prunes
