"""`make bench-views`: a stream on a view against a rebuild of the view and a hand-written floor.

The view joins orders (N rows) with customers (N / 10) and filters out returned orders
(bench/project/models/views). Each round changes D = 0.1% of N base rows, spread over both
tables (orders: a third each of updates, deletes and inserts; customers: updates), then brings
three targets up to date, side by side in one warm session:

- stream: `stream_incremental` `apply_changes` on `stream(ref('orders_customers'))`;
- rebuild: the view materialized as a table;
- floor: what a user would hand-write, the view's delta query (orders' signed changes joined
  with customers before the batch, plus orders after the batch joined with customers' signed
  changes), netted per row and MERGEd by key.

All three must equal the view afterwards. Writes bench/views.md, which bench/results.md includes.

    python -m bench.views [--sizes 1000000 5000000] [--fraction 0.001] [--reps 3]
"""

import argparse
import os
import statistics
import time
from pathlib import Path

from bench.run import PROJECT, Bench

ORDERS = "bench_raw.view_orders"
CUSTOMERS = "bench_raw.view_customers"
VIEW = "bench.orders_customers"
FLOOR = "bench.view_floor_target"
COLUMNS = ("id", "status", "amount", "updated_at", "customer_name", "region")
FLOOR_TARGET = 1.3
REBUILD_TARGET = 0.3
METHODS = ("stream", "rebuild", "floor")


def view_sql(orders: str, customers: str) -> str:
    """The view's query over two given relations (a version of each, or a change set)."""
    return (
        "select o.id, o.status, o.amount, o.updated_at, c.name as customer_name, c.region, "
        f"o.sign * c.sign as sign from {orders} o join {customers} c on o.customer_id = c.id "
        "where o.status != 'returned'"
    )


def signed_changes(table: str, start: int, end: int) -> str:
    """A table's changes in (start - 1, end] as rows with +1 (new image) or -1 (old image)."""
    return (
        f"(select *, case when _change_type in ('insert', 'update_postimage') then 1 else -1 "
        f"end as sign from table_changes('{table}', {start}, {end}))"
    )


def at_version(table: str, version: int) -> str:
    return f"(select *, 1 as sign from {table} version as of {version})"


class ViewBench(Bench):
    """The two base tables, the three targets and the versions the floor has applied."""

    def create_tables(self, n: int) -> None:
        self.sql("create schema if not exists bench_raw")
        for table in (ORDERS, CUSTOMERS):
            self.sql(f"drop table if exists {table}")
        self.sql(
            f"create table {ORDERS} (id bigint, customer_id bigint, status string, "
            "amount decimal(12, 2), updated_at timestamp) using delta"
        )
        self.sql(f"create table {CUSTOMERS} (id bigint, name string, region string) using delta")
        self.customers = n // 10
        self.sql(
            f"insert into {CUSTOMERS} select id, concat('customer ', id), "
            "element_at(array('north', 'south', 'east', 'west'), cast(id % 4 + 1 as int)) "
            f"from range({self.customers})"
        )
        self.insert_orders(0, n)
        self.dbt("run", "--full-refresh", "--select", "tag:views")
        self.floor_write(
            f"create or replace table {FLOOR} using delta "
            "tblproperties ('delta.enableDeletionVectors' = 'true') "
            f"as select * from {VIEW} order by id"
        )
        self.floor_versions = self.versions()

    def insert_orders(self, start: int, count: int) -> None:
        self.sql(
            f"insert into {ORDERS} select id, id % {self.customers}, "
            "element_at(array('placed', 'paid', 'shipped', 'returned'), cast(id % 4 + 1 as int)), "
            "cast(id % 100000 as decimal(12, 2)) / 100, current_timestamp() "
            f"from range({start}, {start + count})"
        )
        self.next_id = max(self.next_id, start + count)

    def versions(self) -> tuple[int, int]:
        return (self.version(ORDERS), self.version(CUSTOMERS))

    def version(self, table: str) -> int:
        return int(self.sql(f"describe history {table} limit 1")[0]["version"])

    def change(self, n: int, d: int, rep: int) -> None:
        """Half of D on orders (a third each updated, deleted, inserted), half on customers."""
        third = max(d // 6, 1)
        start = (rep * 2 * third) % max(n - 2 * third, 1)
        self.sql(
            f"update {ORDERS} set status = 'paid', amount = amount + 1, "
            f"updated_at = current_timestamp() where id >= {start} and id < {start + third}"
        )
        self.sql(f"delete from {ORDERS} where id >= {start + third} and id < {start + 2 * third}")
        self.insert_orders(self.next_id, third)
        first = (rep * 3 * third) % max(self.customers - 3 * third, 1)
        self.sql(
            f"update {CUSTOMERS} set name = concat(name, ' (moved)'), region = 'central' "
            f"where id >= {first} and id < {first + 3 * third}"
        )

    def floor(self) -> float:
        """The view's delta query, netted per row, MERGEd by key; finding the new versions is
        part of it, as pinning is part of the stream's build."""
        began = time.perf_counter()
        (orders0, customers0), (orders1, customers1) = self.floor_versions, self.versions()
        terms = []
        if orders1 > orders0:
            terms.append(
                view_sql(
                    signed_changes(ORDERS, orders0 + 1, orders1), at_version(CUSTOMERS, customers0)
                )
            )
        if customers1 > customers0:
            terms.append(
                view_sql(
                    at_version(ORDERS, orders1),
                    signed_changes(CUSTOMERS, customers0 + 1, customers1),
                )
            )
        if terms:
            self.floor_write(self.floor_merge(" union all ".join(terms)))
        self.floor_versions = (orders1, customers1)
        return time.perf_counter() - began

    @staticmethod
    def floor_merge(delta: str) -> str:
        columns = ", ".join(COLUMNS)
        netted = (
            f"select {columns}, sum(sign) as net from ({delta}) group by {columns} "
            "having sum(sign) != 0"
        )
        newest = (
            f"select * from ({netted}) "
            "qualify row_number() over (partition by id order by net desc) = 1"
        )
        assignments = ", ".join(f"t.{c} = s.{c}" for c in COLUMNS)
        values = ", ".join(f"s.{c}" for c in COLUMNS)
        return (
            f"merge into {FLOOR} t using ({newest}) s on t.id = s.id "
            "when matched and s.net < 0 then delete "
            f"when matched then update set {assignments} "
            f"when not matched and s.net > 0 then insert ({columns}) values ({values})"
        )

    def rows_wrong(self, targets: list[str]) -> list[int]:
        """Per target: rows that differ from the view, as multisets, in one pass."""
        tables = [VIEW, *targets]
        columns = ", ".join(COLUMNS)
        union = " union all ".join(
            f"select {columns}, {i} as side from {table}" for i, table in enumerate(tables)
        )
        counts = ", ".join(f"count_if(side = {i}) as c{i}" for i in range(len(tables)))
        diffs = ", ".join(f"sum(abs(c{i} - c0))" for i in range(1, len(tables)))
        [row] = self.sql(
            f"select {diffs} from (select {counts} from ({union}) group by {columns})"
        )
        return [int(value) for value in row]

    def measure_round(self) -> dict[str, tuple[float, int]]:
        seconds = {
            "stream": self.dbt("run", "--select", "view_stream_mirror"),
            "rebuild": self.dbt("run", "--select", "view_rebuild"),
            "floor": self.floor(),
        }
        wrong = self.rows_wrong(["bench.view_stream_mirror", "bench.view_rebuild", FLOOR])
        return {m: (seconds[m], w) for m, w in zip(METHODS, wrong, strict=True)}


def report(rounds: dict[int, list[dict[str, tuple[float, int]]]], d_of: dict[int, int]) -> str:
    lines = [
        "## Streams on views (issue 17)",
        "",
        "A view joining orders (N rows) with customers (N / 10) and a filter; each round changes "
        "D base rows, half in each table. Median seconds of each build (worst rows_wrong in "
        "brackets): the view stream's `apply_changes` build, the view rebuilt as a table, and "
        "the hand-written floor (the view's delta query, netted, MERGEd).",
        "",
        "| N | D | stream | rebuild | floor | stream/floor | stream/rebuild |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    verdicts = []
    for n, runs in sorted(rounds.items()):
        median = {m: statistics.median(run[m][0] for run in runs) for m in METHODS}
        worst = {m: max(run[m][1] for run in runs) for m in METHODS}
        to_floor = median["stream"] / median["floor"]
        to_rebuild = median["stream"] / median["rebuild"]
        lines.append(
            f"| {n:,} | {d_of[n]:,} | "
            + " | ".join(f"{median[m]:.2f} ({worst[m]})" for m in METHODS)
            + f" | {to_floor:.2f} | {to_rebuild:.2f} |"
        )
        verdicts.append(
            f"N={n:,}: stream/floor {to_floor:.2f} (target <= {FLOOR_TARGET}: "
            f"{'met' if to_floor <= FLOOR_TARGET else 'not met'})"
        )
        if n >= 5_000_000:
            verdicts.append(
                f"N={n:,}: stream/rebuild {to_rebuild:.2f} (target <= {REBUILD_TARGET}: "
                f"{'met' if to_rebuild <= REBUILD_TARGET else 'not met'})"
            )
    return "\n".join([*lines, "", *(f"- {v}" for v in verdicts), ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--fraction", type=float, default=0.001)
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()

    os.chdir(PROJECT)
    bench = ViewBench()
    rounds: dict[int, list[dict[str, tuple[float, int]]]] = {}
    d_of = {}
    for n in options.sizes:
        bench.create_tables(n)
        d_of[n] = max(int(n * options.fraction), 6)
        rounds[n] = []
        for rep in range(options.reps):
            bench.change(n, d_of[n], rep)
            rounds[n].append(bench.measure_round())
            print(f"n={n} rep={rep}: {rounds[n][-1]}", flush=True)
    text = report(rounds, d_of)
    (Path(__file__).parent / "views.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
