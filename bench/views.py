"""`make bench-views`: a stream on a view against a rebuild of the view and a hand-written floor,
on two layouts.

The view joins orders (N rows) with customers (N / 10) and filters out returned orders
(bench/project/models/views). Each round changes D = 0.1% of N base rows, half in each table
(orders: a third each of updates, deletes and inserts; customers: renames), then brings three
targets up to date, side by side in one warm session:

- stream: `stream_incremental` `apply_changes` on `stream(ref('orders_customers'))`;
- rebuild: the view materialized as a table;
- floor: what a user would hand-write, the view's delta query (orders' signed changes joined
  with customers before the batch, plus orders after the batch joined with customers' signed
  changes), netted per row and MERGEd by key.

Two layouts, each at every N:

- `spread`: orders in id order, so a customer's orders sit in every file; the changed orders
  are contiguous ids, the renamed customers contiguous ids whose orders are spread over the
  whole table. No locality: the change joins every orders file, and the stream's build
  (`view_stream_mirror`, the defaults) should see that and rebuild.
- `clustered`: orders and the stream's target clustered by customer_id (Delta liquid
  clustering, written in customer order: OSS Delta clusters on OPTIMIZE, so the bench writes
  the order itself), and the changes local in it, as real changes are (this week's
  customers, today's orders): the renamed customers lie in four blocks of ids, the changed
  orders belong to one more block. The stream (`view_stream_clustered`) reads orders through
  the renamed customers' ranges and MERGEs through the changed customers' ranges; the floor
  is given the same layout and the same knowledge, as literal predicates.

All three must equal the view afterwards. Writes bench/views.md, which bench/results.md
includes.

    python -m bench.views [--sizes 5000000 20000000] [--reps 3 1] [--layouts spread clustered]
"""

import argparse
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.run import FILE_ROWS, PROJECT, Bench
from dbt.adapters.spark_streams.streams.builds.build import write_confs
from dbt.adapters.spark_streams.streams.offsets.commit import run_with_confs

ORDERS = "bench_raw.view_orders"
CUSTOMERS = "bench_raw.view_customers"
VIEW = "bench.orders_customers"
FLOOR = "bench.view_floor_target"
REBUILD = "bench.view_rebuild"
COLUMNS = ("id", "customer_id", "status", "amount", "updated_at", "customer_name", "region")
ORDERS_PER_CUSTOMER = 10
BLOCKS = 4
METHODS = ("stream", "rebuild", "floor")
# Targets, as ratios of medians in one run.
SPREAD_TO_REBUILD = 1.1
CLUSTERED_TO_FLOOR = 1.2
CLUSTERED_TO_REBUILD = {5_000_000: 0.5, 20_000_000: 0.25}


@dataclass(frozen=True)
class Layout:
    name: str
    stream_model: str
    clustered: bool


LAYOUTS = {
    "spread": Layout("spread", "view_stream_mirror", clustered=False),
    "clustered": Layout("clustered", "view_stream_clustered", clustered=True),
}


@dataclass
class Batch:
    """A round's changes, as the floor knows them: the customer id blocks they touch."""

    blocks: list[tuple[int, int]] = field(default_factory=list)  # renamed customers [lo, hi)
    orders_block: tuple[int, int] | None = None  # the customers of the changed orders


def view_sql(orders: str, customers: str) -> str:
    """The view's query over two given relations (a version of each, or a change set)."""
    return (
        "select o.id, o.customer_id, o.status, o.amount, o.updated_at, "
        "c.name as customer_name, c.region, o.sign * c.sign as sign "
        f"from {orders} o join {customers} c on o.customer_id = c.id "
        "where o.status != 'returned'"
    )


def signed_changes(table: str, start: int, end: int) -> str:
    """A table's changes in (start - 1, end] as rows with +1 (new image) or -1 (old image)."""
    return (
        f"(select *, case when _change_type in ('insert', 'update_postimage') then 1 else -1 "
        f"end as sign from table_changes('{table}', {start}, {end}))"
    )


def at_version(table: str, version: int, where: str = "") -> str:
    condition = f" where {where}" if where else ""
    return f"(select *, 1 as sign from {table} version as of {version}{condition})"


def in_blocks(column: str, blocks: list[tuple[int, int]]) -> str:
    """`column` in any of the half-open blocks of ids, as a literal predicate."""
    terms = [f"{column} between {low} and {high - 1}" for low, high in blocks]
    return "(" + " or ".join(terms) + ")" if terms else "false"


class ViewBench(Bench):
    """The two base tables, the three targets and the versions the floor has applied."""

    def create_tables(self, n: int, layout: Layout) -> None:
        self.sql("create schema if not exists bench_raw")
        for table in (ORDERS, CUSTOMERS):
            self.sql(f"drop table if exists {table}")
        cluster = "cluster by (customer_id)" if layout.clustered else ""
        self.sql(
            f"create table {ORDERS} (id bigint, customer_id bigint, status string, "
            f"amount decimal(12, 2), updated_at timestamp) using delta {cluster}"
        )
        self.sql(f"create table {CUSTOMERS} (id bigint, name string, region string) using delta")
        self.customers = n // ORDERS_PER_CUSTOMER
        self.write(
            f"insert into {CUSTOMERS} select id, concat('customer ', id), "
            "element_at(array('north', 'south', 'east', 'west'), cast(id % 4 + 1 as int)) "
            f"from range({self.customers})"
        )
        self.next_id = 0
        order = "customer_id" if layout.clustered else "id"
        self.insert_orders(0, n, f"id % {self.customers}", order)
        models = ("orders_customers", layout.stream_model, "view_rebuild")
        self.dbt("run", "--full-refresh", "--select", *models)
        self.floor_write(
            f"create or replace table {FLOOR} using delta {cluster} "
            "tblproperties ('delta.enableDeletionVectors' = 'true') "
            f"as select * from {VIEW} order by {order}"
        )
        self.floor_versions = self.versions()

    def write(self, statement: str) -> None:
        """A write to a base table, in files of at most FILE_ROWS rows (as the targets')."""
        run_with_confs(self.sql, statement, write_confs(FILE_ROWS))

    def insert_orders(self, start: int, count: int, customer: str, order_by: str = "") -> None:
        ordered = f" order by {order_by}" if order_by else ""
        self.write(
            f"insert into {ORDERS} select * from (select id, {customer} as customer_id, "
            "element_at(array('placed', 'paid', 'shipped', 'returned'), cast(id % 4 + 1 as int)) "
            "as status, cast(id % 100000 as decimal(12, 2)) / 100 as amount, "
            f"current_timestamp() as updated_at from range({start}, {start + count})){ordered}"
        )
        self.next_id = max(self.next_id, start + count)

    def versions(self) -> tuple[int, int]:
        return (self.version(ORDERS), self.version(CUSTOMERS))

    def version(self, table: str) -> int:
        return int(self.sql(f"describe history {table} limit 1")[0]["version"])

    def change(self, n: int, d: int, rep: int, layout: Layout) -> Batch:
        return self.change_local(d, rep) if layout.clustered else self.change_spread(n, d, rep)

    def change_spread(self, n: int, d: int, rep: int) -> Batch:
        """Half of D on orders (a third each updated, deleted, inserted, on contiguous ids),
        half on customers (renamed, contiguous ids, so their orders are everywhere)."""
        third = max(d // 6, 1)
        start = (rep * 2 * third) % max(n - 2 * third, 1)
        self.sql(
            f"update {ORDERS} set status = 'paid', amount = amount + 1, "
            f"updated_at = current_timestamp() where id >= {start} and id < {start + third}"
        )
        self.sql(f"delete from {ORDERS} where id >= {start + third} and id < {start + 2 * third}")
        self.insert_orders(self.next_id, third, f"id % {self.customers}")
        first = (rep * 3 * third) % max(self.customers - 3 * third, 1)
        self.rename_customers([(first, first + 3 * third)])
        return Batch()

    def change_local(self, d: int, rep: int) -> Batch:
        """The same amounts, local in customer order: the renamed customers in BLOCKS blocks
        of ids, the changed orders (a third each updated, deleted, inserted) those of one
        more block of customers."""
        third = max(d // 6, 1)
        width = max(3 * third // BLOCKS, 1)
        spacing = self.customers // (BLOCKS + 1)
        offset = (rep * 7919) % max(spacing - 2 * width, 1)
        blocks = [(k * spacing + offset, k * spacing + offset + width) for k in range(BLOCKS)]
        self.rename_customers(blocks)
        owners = max(third // ORDERS_PER_CUSTOMER, 1)
        low = BLOCKS * spacing + offset
        self.sql(
            f"update {ORDERS} set status = 'paid', amount = amount + 1, "
            f"updated_at = current_timestamp() "
            f"where customer_id >= {low} and customer_id < {low + owners}"
        )
        self.sql(
            f"delete from {ORDERS} where customer_id >= {low + owners} "
            f"and customer_id < {low + 2 * owners}"
        )
        self.insert_orders(self.next_id, third, f"{low} + id % {owners}")
        return Batch(blocks, (low, low + 2 * owners))

    def rename_customers(self, blocks: list[tuple[int, int]]) -> None:
        self.sql(
            f"update {CUSTOMERS} set name = concat(name, ' (moved)'), region = 'central' "
            f"where {in_blocks('id', blocks)}"
        )

    def floor_round(self, batch: Batch) -> float:
        """The view's delta query, netted per row, MERGEd by key; finding the new versions is
        part of it, as pinning is part of the stream's build. With a batch's blocks known, each
        term's other table is read through them, and the MERGE too."""
        began = time.perf_counter()
        (orders0, customers0), (orders1, customers1) = self.floor_versions, self.versions()
        owners = [batch.orders_block] if batch.orders_block else []
        terms = []
        if orders1 > orders0:
            customers = at_version(
                CUSTOMERS, customers0, in_blocks("id", owners) if owners else ""
            )
            terms.append(view_sql(signed_changes(ORDERS, orders0 + 1, orders1), customers))
        if customers1 > customers0:
            blocks = in_blocks("customer_id", batch.blocks) if batch.blocks else ""
            orders = at_version(ORDERS, orders1, blocks)
            terms.append(view_sql(orders, signed_changes(CUSTOMERS, customers0 + 1, customers1)))
        touched = in_blocks("t.customer_id", batch.blocks + owners) if batch.blocks else ""
        if terms:
            self.floor_write(self.floor_merge(" union all ".join(terms), touched))
        self.floor_versions = (orders1, customers1)
        return time.perf_counter() - began

    @staticmethod
    def floor_merge(delta: str, touched: str) -> str:
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
        match = f"t.id = s.id and {touched}" if touched else "t.id = s.id"
        return (
            f"merge into {FLOOR} t using ({newest}) s on {match} "
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

    def measure_round(self, layout: Layout, batch: Batch) -> dict[str, tuple[float, int, str]]:
        [stream] = self.dbt_nodes("run", "--select", layout.stream_model)
        path = (stream.adapter_response or {}).get("build_path") or ""
        seconds = {
            "stream": stream.execution_time,
            "rebuild": self.dbt("run", "--select", "view_rebuild"),
            "floor": self.floor_round(batch),
        }
        wrong = self.rows_wrong([f"bench.{layout.stream_model}", REBUILD, FLOOR])
        return {
            m: (seconds[m], w, path if m == "stream" else "")
            for m, w in zip(METHODS, wrong, strict=True)
        }


Rounds = dict[tuple[str, int], list[dict[str, tuple[float, int, str]]]]


def report(rounds: Rounds, d_of: dict[int, int]) -> str:
    lines = [
        "## Streams on views",
        "",
        "A view joining orders (N rows) with customers (N / 10) and a filter; each round "
        "changes D base rows, half in each table. Two layouts: `spread` (orders in id order, "
        "renamed customers' orders all over the table) and `clustered` (orders and the "
        "stream's target clustered by customer, the changes in a few blocks of customers). "
        "Median seconds of each build (worst rows_wrong in brackets): the view stream's "
        "`apply_changes` build (and the path it took), the view rebuilt as a table, and the "
        "hand-written floor (the view's delta query, netted, MERGEd; on the clustered layout "
        "with the batch's customer blocks as literal predicates).",
        "",
        "| layout | N | D | stream | path | rebuild | floor | stream/floor | stream/rebuild |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    verdicts = []
    for (layout, n), runs in rounds.items():
        median = {m: statistics.median(run[m][0] for run in runs) for m in METHODS}
        worst = {m: max(run[m][1] for run in runs) for m in METHODS}
        paths = "/".join(sorted({run["stream"][2] for run in runs}))
        to_floor = median["stream"] / median["floor"]
        to_rebuild = median["stream"] / median["rebuild"]
        cells = [f"{median[m]:.2f} ({worst[m]})" for m in METHODS]
        lines.append(
            f"| {layout} | {n:,} | {d_of[n]:,} | {cells[0]} | {paths} | {cells[1]} | "
            f"{cells[2]} | {to_floor:.2f} | {to_rebuild:.2f} |"
        )
        verdicts += _verdicts(layout, n, to_floor, to_rebuild)
    return "\n".join([*lines, "", *(f"- {v}" for v in verdicts), ""])


def _verdicts(layout: str, n: int, to_floor: float, to_rebuild: float) -> list[str]:
    def verdict(what: str, value: float, target: float) -> str:
        met = "met" if value <= target else "not met"
        return f"{layout}, N={n:,}: {what} {value:.2f} (target <= {target}: {met})"

    if layout == "spread":
        return [verdict("stream/rebuild", to_rebuild, SPREAD_TO_REBUILD)]
    found = [verdict("stream/floor", to_floor, CLUSTERED_TO_FLOOR)]
    if n in CLUSTERED_TO_REBUILD:
        found.append(verdict("stream/rebuild", to_rebuild, CLUSTERED_TO_REBUILD[n]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000_000, 20_000_000])
    parser.add_argument(
        "--reps", type=int, nargs="+", default=[3, 1], help="rounds per size, in --sizes order"
    )
    parser.add_argument("--fraction", type=float, default=0.001)
    parser.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=list(LAYOUTS))
    options = parser.parse_args()

    os.chdir(PROJECT)
    bench = ViewBench()
    rounds: Rounds = {}
    d_of = {}
    reps = options.reps + [options.reps[-1]] * (len(options.sizes) - len(options.reps))
    for n, count in zip(options.sizes, reps, strict=False):
        d_of[n] = max(int(n * options.fraction), 6)
        for name in options.layouts:
            layout = LAYOUTS[name]
            bench.create_tables(n, layout)
            rounds[(name, n)] = []
            for rep in range(count):
                batch = bench.change(n, d_of[n], rep, layout)
                rounds[(name, n)].append(bench.measure_round(layout, batch))
                print(f"{name} n={n} rep={rep}: {rounds[(name, n)][-1]}", flush=True)
    text = report(rounds, d_of)
    (Path(__file__).parent / "views.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
