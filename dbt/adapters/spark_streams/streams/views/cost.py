"""What a view stream's next build would read, against a rebuild of its target from the view.

A view stream's changes are one join term per changed table (algebra.py): the table's change
set joined with the other tables, each read whole unless a join-key predicate lets Delta
skip files (pruning.py). When the change set's keys sit all over the other tables' files (a
change spread evenly over the keys of a table with no locality), the terms read as much as
the view itself, and the MERGE that follows touches most files of the target: rebuilding the
target from the view is then cheaper. Incremental engines decide this with a cost model and
say so (or, as Databricks' incremental refresh did first, silently); this one estimates from
Delta's own file statistics, before reading any data:

- the bytes the terms would scan: per term, each other table of the term's branch at the
  version the term reads, with its predicate, as Spark's plan states them once Delta has
  skipped files (EXPLAIN COST, `sizeInBytes` of the relation; over Spark Connect too);
- the bytes a rebuild would scan: every table reference of the view, whole.

A materialized view whose refresh recomputes groups (streams/mv/: a MIN or MAX whose extremum
may have been deleted, COUNT(DISTINCT), HAVING) also reads its whole input at the pins, as
Spark plans the recompute: the input's group keys give Delta's file statistics nothing to skip
by. Its estimate counts that read too, so such a refresh costs at least a rebuild's scan.

A materialized view over an outer join (streams/mv/joined_sql.py) has no view stream: its
refresh finds the groups each changed table's rows may touch by joining them with every other
table, whole, then recomputes those groups from every table, whole (`recompute_cost`). It
always reads more than a rebuild, which reads each table once, so over `rebuild_min_bytes` such
a view refreshes fully whenever a table changed.

The build rebuilds when the terms would scan at least REBUILD_FRACTION of what a rebuild
scans: the incremental path then also MERGEs into files spread over the whole target, so a
rebuild's scan and write cost no more. Below `rebuild_min_bytes` (the model's, by default
32 MiB) the view is small enough that either path is quick, and builds stay incremental.
"""

import re
from dataclasses import dataclass

from sqlglot import exp

from dbt.adapters.spark_streams.streams.sql.catalog import table_bytes
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.views.algebra import TableInterval
from dbt.adapters.spark_streams.streams.views.definition import ViewDefinition
from dbt.adapters.spark_streams.streams.views.pruning import ChangeRanges, Prunes

REBUILD_FRACTION = 0.5
NO_KEYS = "false"  # a recompute's ranges when the change has no rows: it reads nothing
UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}
SIZE = re.compile(r"Relation .*?Statistics\(sizeInBytes=([\d.]+) ?([KMGTP]?i?B)")


@dataclass(frozen=True)
class ViewCost:
    """The bytes the next build's terms would scan, and the bytes a rebuild would."""

    incremental_bytes: int
    rebuild_bytes: int
    recomputes: bool = False  # the refresh also reads the whole input (a materialized view)

    @property
    def fraction(self) -> float:
        return self.incremental_bytes / self.rebuild_bytes if self.rebuild_bytes else 0.0

    @property
    def rebuild_is_cheaper(self) -> bool:
        return self.fraction >= REBUILD_FRACTION

    def reason(self) -> str:
        said = (
            f"the change would scan {self.fraction:.0%} of what a rebuild scans "
            f"({readable(self.incremental_bytes)} of {readable(self.rebuild_bytes)})"
        )
        return f"{said}, recomputing groups from the whole input" if self.recomputes else said


def readable(size: int) -> str:
    """Bytes as Spark prints them: 3.2 MiB."""
    for unit, factor in reversed(UNITS.items()):
        if size >= factor > 1:
            return f"{size / factor:.1f} {unit}"
    return f"{size} B"


class TableSizes:
    """Each table's current bytes, from its snapshot (DESCRIBE DETAIL, no data read), asked
    once per build."""

    def __init__(self, run: RunSql) -> None:
        self.run = run
        self.known: dict[str, int] = {}

    def __getitem__(self, table: str) -> int:
        if table not in self.known:
            self.known[table] = table_bytes(self.run, table)
        return self.known[table]


@dataclass(frozen=True)
class ViewPlan:
    """A view stream's next read: its tables' intervals and the terms' predicates."""

    view: ViewDefinition
    intervals: dict[str, TableInterval]
    prunes: dict[int, Prunes]
    sizes: TableSizes
    ranges: ChangeRanges | None = None  # the change sets' ranges read for the prunes

    @property
    def view_bytes(self) -> int:
        """The bytes of every table reference of the view: what a rebuild scans."""
        return sum(self.sizes[name] for name in self.view.tables)

    def cost(self, run: RunSql, recomputes: bool = False, ranged: str = "") -> ViewCost:
        """The estimate of the read against a rebuild; `recomputes`: the refresh also reads
        the input (a materialized view recomputing groups): whole, or its one table where
        `ranged` (the group key's ranges in the change) lets Delta skip files."""
        view, intervals = self.view, self.intervals
        incremental = self._recompute_bytes(run, ranged) if recomputes else 0
        for index, name in enumerate(view.tables):
            if not intervals[name].changed:
                continue
            for other in _same_branch(view, index):
                table = view.tables[other]
                predicate = self.prunes.get(index, {}).get(other)
                if predicate is None:
                    incremental += self.sizes[table]
                    continue
                interval = intervals[table]
                version = interval.pin.version if other < index else interval.offset
                incremental += scanned_bytes(run, table, version, predicate)
        return ViewCost(incremental, self.view_bytes, recomputes and not ranged)

    def _recompute_bytes(self, run: RunSql, ranged: str) -> int:
        """What recomputing groups reads of the input: all of it, or its one table under the
        group key's ranges."""
        if not ranged:
            return self.view_bytes
        if ranged == NO_KEYS:
            return 0
        [table] = self.view.tables
        return scanned_bytes(run, table, self.intervals[table].pin.version, ranged)


def recompute_cost(
    sizes: TableSizes, tables: list[str], changed: list[str], min_bytes: int
) -> ViewCost | None:
    """The estimate of a refresh that recomputes groups through an outer join: each changed
    table's rows joined with every other table, then every table read again for the groups;
    None when the tables hold less than `min_bytes` (the model's rebuild_min_bytes)."""
    rebuild = sum(sizes[table] for table in tables)
    if rebuild < min_bytes:
        return None
    discovery = sum(sizes[other] for table in changed for other in tables if other != table)
    return ViewCost(rebuild + discovery, rebuild, recomputes=True)


def scanned_bytes(run: RunSql, table: str, version: int, predicate: str) -> int:
    """The bytes Spark's optimized plan scans of `table` at `version` under `predicate`, after
    Delta's data skipping: no data is read."""
    [row] = run(f"explain cost select * from {table} version as of {version} where {predicate}")
    plan = str(next(iter(row.values())))
    found = SIZE.search(plan)
    if found is None:
        raise ValueError(f"No relation size in the plan of {table}: {plan[:500]}")
    return int(float(found.group(1)) * UNITS[found.group(2)])


def _same_branch(view: ViewDefinition, index: int) -> list[int]:
    """The other table references a term of reference `index` reads: those not on the other
    side of a UNION ALL from it (its term silences those branches)."""
    references = list(view.query.find_all(exp.Table, bfs=False))
    position = {id(table): number for number, table in enumerate(references)}
    apart: set[int] = set()
    for union in view.query.find_all(exp.Union):
        sides = [
            {position[id(t)] for t in side.find_all(exp.Table) if id(t) in position}
            for side in (union.this, union.expression)
        ]
        for near, far in (sides, sides[::-1]):
            if index in near:
                apart |= far
    return [other for other in range(len(references)) if other != index and other not in apart]
