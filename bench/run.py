"""`make bench`: time four ways of bringing a target up to date after a change batch.

One process, one warm Spark session: dbt builds run through dbt's in-process runner and are
timed as the node's own execution time (no parsing); the floor is hand-written Spark SQL in the
same session. Every method sees the same source and the same change batch. The registry append
a stream run makes once, after its last model, is timed on its own (`registry_append`).

    python bench/run.py [--sizes 1000000 5000000] [--deltas 0.0001 0.001 0.01 0.1] [--reps 3]
    python bench/run.py --sizes 1000000 20000000 --changes 2000  # the same D at every N

Each N starts with `--warmup` untimed rounds (default 1) at its first D: the first builds in a
JVM pay for its JIT's compiles and first reads, and at 1M, measured first, that made the
stream slower than at 20M with the JVM's own JIT.
"""

import argparse
import json
import os
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from dbt.cli.main import dbtRunner
from pyspark.sql import SparkSession

from bench.report import write_report
from dbt.adapters.spark_streams.impl import SparkStreamsAdapter
from dbt.adapters.spark_streams.streams.builds.build import write_confs
from dbt.adapters.spark_streams.streams.offsets.commit import run_with_confs

PROJECT = Path(__file__).resolve().parent / "project"
SOURCE = "bench_raw.orders"
FLOOR = "bench.floor_target"
# The floor's target is stored like the stream's (deletion vectors on, files of at most
# FILE_ROWS rows in key order, the stream's file_rows default), so stream / floor measures the
# stream's own overhead and not a difference in table layout.
FLOOR_PROPERTIES = "tblproperties ('delta.enableDeletionVectors' = 'true')"
FILE_ROWS = 100_000
LOADED_AT = "timestamp'2026-01-01 00:00:00'"
COLUMNS = "id, customer_id, status, amount, created_at, updated_at, note"
ASSIGNMENTS = ", ".join(f"t.{c} = s.{c}" for c in COLUMNS.split(", "))
SOURCE_VALUES = ", ".join(f"s.{c}" for c in COLUMNS.split(", "))
DBT_METHODS = {
    "stream": "stream_mirror",
    "full_rebuild": "full_rebuild",
    "watermark_merge": "watermark_merge",
}


@dataclass
class Result:
    n: int
    d: int
    method: str
    seconds: float
    rows_wrong: int


class Bench:
    """The source, the targets and the last version the floor has applied."""

    def __init__(self) -> None:
        os.environ["DBT_PROFILES_DIR"] = str(PROJECT)
        self.runner = dbtRunner()
        self.dbt("debug")  # starts the session
        active = SparkSession.getActiveSession()
        assert active is not None, "the adapter's embedded session did not start"
        self.spark = active
        self.floor_version = 0
        self.next_id = 0
        self.registry_seconds = 0.0
        self._time_registry_appends()

    def _time_registry_appends(self) -> None:
        """Time the adapter's once-per-invocation registry append, which runs after the last
        node and so is not in any node's execution time."""
        flush = SparkStreamsAdapter.flush_stream_registry

        def timed_flush(adapter: SparkStreamsAdapter) -> None:
            began = time.perf_counter()
            flush(adapter)
            self.registry_seconds += time.perf_counter() - began

        SparkStreamsAdapter.flush_stream_registry = timed_flush  # type: ignore[method-assign, assignment]

    def dbt(self, *args: str) -> float:
        """Run dbt in this process; the build's own execution time, in seconds."""
        return sum(node.execution_time for node in self.dbt_nodes(*args))

    def dbt_nodes(self, *args: str) -> list:
        """Run dbt in this process; its nodes' results (each with its execution time)."""
        self.registry_seconds = 0.0
        result = self.runner.invoke([*args, "--project-dir", str(PROJECT)])
        if not result.success:
            raise RuntimeError(f"dbt {' '.join(args)} failed: {result.exception or result.result}")
        return list(getattr(result.result, "results", None) or [])

    def sql(self, statement: str) -> list:
        return self.spark.sql(statement).collect()

    def create_source(self, n: int) -> None:
        """N orders, then every target built."""
        self.create_orders(SOURCE, n)
        others = ("tag:views", "tag:history", "tag:files", "tag:many", "tag:cdc", "tag:marts")
        self.dbt("run", "--full-refresh", "--exclude", *others)
        self.dbt("run", "--select", "stream_mirror")  # consumes the stream's own setup commits
        self.floor_write(
            f"create or replace table {FLOOR} using delta {FLOOR_PROPERTIES} "
            f"as select * from {SOURCE} order by id"
        )
        self.floor_version = self.latest_version()

    def create_orders(self, table: str, n: int) -> None:
        """A new table of N orders with keys, strings, decimals and timestamps."""
        self.sql("create schema if not exists bench_raw")
        self.sql(f"drop table if exists {table}")
        self.sql(
            f"create table {table} (id bigint, customer_id bigint, status string, "
            "amount decimal(12, 2), created_at timestamp, updated_at timestamp, note string) "
            "using delta"
        )
        self.insert_rows(0, n, table=table)

    def insert_rows(
        self, start: int, count: int, updated_at: str = LOADED_AT, table: str = SOURCE
    ) -> None:
        self.sql(
            f"insert into {table} select id, id % 50000, "
            "element_at(array('placed', 'paid', 'shipped', 'returned'), cast(id % 4 + 1 as int)), "
            "cast(id % 100000 as decimal(12, 2)) / 100, "
            f"{LOADED_AT} + make_interval(0, 0, 0, 0, 0, 0, id % 86400), {updated_at}, "
            f"concat('order ', id) from range({start}, {start + count})"
        )
        self.next_id = max(self.next_id, start + count)

    def latest_version(self, table: str = SOURCE) -> int:
        return int(self.sql(f"describe history {table} limit 1")[0]["version"])

    def apply_changes(self, n: int, d: int, rep: int, table: str = SOURCE) -> None:
        """A third each of updates, deletes and inserts, on contiguous id ranges."""
        third = max(d // 3, 1)
        start = (rep * 3 * third) % max(n - 3 * third, 1)
        self.sql(
            f"update {table} set status = 'updated', amount = amount + 1, "
            f"updated_at = current_timestamp() where id >= {start} and id < {start + third}"
        )
        self.sql(f"delete from {table} where id >= {start + third} and id < {start + 2 * third}")
        self.insert_rows(self.next_id, d - 2 * third, "current_timestamp()", table)

    def floor(self) -> float:
        """Hand-written: the changes of exactly the new versions, MERGEd by key. Finding the
        newest version is part of it, as pinning is part of the stream's build."""
        began = time.perf_counter()
        self.floor_version = self.merge_changes(SOURCE, FLOOR, self.floor_version)
        return time.perf_counter() - began

    def merge_changes(self, source: str, target: str, applied: int) -> int:
        """MERGE the changes of `source` after version `applied` into `target`; the version
        applied now."""
        latest = self.latest_version(source)
        if latest > applied:
            self.floor_write(
                f"""merge into {target} t using (
                  select * from (
                    select *, row_number() over (partition by id order by _commit_version desc,
                      case _change_type when 'delete' then 0 else 1 end desc) as newest
                    from table_changes('{source}', {applied + 1}, {latest})
                    where _change_type != 'update_preimage')
                  where newest = 1) s
                on t.id = s.id
                when matched and s._change_type = 'delete' then delete
                when matched then update set {ASSIGNMENTS}
                when not matched and s._change_type != 'delete' then
                  insert ({COLUMNS}) values ({SOURCE_VALUES})"""
            )
        return latest

    def floor_write(self, statement: str) -> None:
        """A write to the floor's target, with files capped at FILE_ROWS rows as the stream's."""
        run_with_confs(self.sql, statement, write_confs(FILE_ROWS))

    def differing_rows(self, one: str, other: str) -> int:
        """Rows one query gives and the other does not, as multisets, both ways."""
        [row] = self.sql(
            f"select (select count(*) from ({one} except all {other})) + "
            f"(select count(*) from ({other} except all {one}))"
        )
        return int(row[0])

    def rows_wrong(self, targets: list[str]) -> list[int]:
        return self.rows_wrong_against(SOURCE, targets)

    def rows_wrong_against(self, source: str, targets: list[str]) -> list[int]:
        """Per target: rows in it but not in the source plus the reverse, as multisets.

        One aggregate over the source and every target counts each distinct row in each, so
        a round compares all methods in one pass instead of one pass per target.
        """
        tables = [source, *targets]
        union = " union all ".join(
            f"select {COLUMNS}, {i} as side from {table}" for i, table in enumerate(tables)
        )
        counts = ", ".join(f"count_if(side = {i}) as c{i}" for i in range(len(tables)))
        diffs = ", ".join(f"sum(abs(c{i} - c0))" for i in range(1, len(tables)))
        grouped = f"select {counts} from ({union}) group by {COLUMNS}"
        [row] = self.sql(f"select {diffs} from ({grouped})")
        return [int(value) for value in row]

    def time_methods(self) -> tuple[dict[str, float], float]:
        """Bring every target up to date: each method's seconds, and the registry append's."""
        timed, registry = {}, 0.0
        for method, model in DBT_METHODS.items():
            timed[method] = self.dbt("run", "--select", model)
            if method == "stream":
                registry = self.registry_seconds
        timed["floor"] = self.floor()
        return timed, registry

    def measure(self, n: int, d: int) -> list[Result]:
        timed, registry = self.time_methods()
        targets = [f"bench.{model}" for model in DBT_METHODS.values()] + [FLOOR]
        wrong = self.rows_wrong(targets)
        return [
            Result(n, d, method, seconds, rows_wrong)
            for (method, seconds), rows_wrong in zip(timed.items(), wrong, strict=True)
        ] + [Result(n, d, "registry_append", registry, 0)]


def change_sizes(n: int, sizes: list[int], fractions: list[float]) -> list[int]:
    """D as fractions of N, plus the smallest N's absolute D's (to compare N at equal D)."""
    wanted = {int(n * f) for f in fractions} | {int(min(sizes) * f) for f in fractions}
    return sorted(max(d, 3) for d in wanted if d <= n * max(fractions))


def save(results: list[Result], out: Path) -> None:
    """results.json; `python -m bench.report FILE` writes the report from it."""
    (out / "results.json").write_text(json.dumps([asdict(r) for r in results], indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.0001, 0.001, 0.01, 0.1])
    parser.add_argument(
        "--changes", type=int, nargs="+", help="absolute D's for every N (instead of --deltas)"
    )
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--warmup", type=int, default=1, help="untimed rounds at each N before its first D"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    options = parser.parse_args()

    options.out = options.out.resolve()  # before the chdir: --out is relative to the caller
    os.chdir(PROJECT)
    bench = Bench()
    results: list[Result] = []
    options.out.mkdir(parents=True, exist_ok=True)
    for n in options.sizes:
        bench.create_source(n)
        changes = options.changes or change_sizes(n, options.sizes, options.deltas)
        # Negative reps warm the JVM up at this N (its JIT, its first reads of the new tables)
        # and are not reported; their changes use key ranges the timed rounds do not.
        for rep in range(-options.warmup, 0):
            bench.apply_changes(n, changes[0], rep)
            bench.time_methods()
            print(f"n={n} d={changes[0]}: warm-up round, not reported", flush=True)
        for _ in range(options.reps):
            seconds = bench.dbt("run", "--select", "stream_mirror")
            [wrong] = bench.rows_wrong(["bench.stream_mirror"])
            results.append(Result(n, 0, "stream_empty", seconds, wrong))
        for d in changes:
            for rep in range(options.reps):
                bench.apply_changes(n, d, rep)
                results.extend(bench.measure(n, d))
                print(
                    f"n={n} d={d} rep={rep}: "
                    + ", ".join(
                        f"{r.method} {r.seconds:.2f}s ({r.rows_wrong})" for r in results[-5:]
                    ),
                    flush=True,
                )
                # after every round, so that a run stopped early keeps what it measured
                save(results, options.out)
    save(results, options.out)
    write_report(results, options.out)
    print(f"medians: {statistics.median(r.seconds for r in results):.2f}s overall")


if __name__ == "__main__":
    main()
