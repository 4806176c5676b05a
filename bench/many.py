"""`make bench-many`: one `dbt run` of many stream models against the sum of their floors.

Real projects have tens of stream models. This case creates M sources (default 20), each an
orders table of N rows like make bench's, and one `apply_changes` mirror of each (the models
are written into bench/project/models/many/ at start; that folder is not part of the
repository). Each round changes D = 0.1% of every source (a third each updated, deleted and
inserted), then times:

- the run: one in-process `dbt run --select tag:many --threads T` in the warm session,
  parsing, every node and the registry append included (a dbt process would add its start);
- the floors: per source, the MERGE a user would hand-write (bench/run.py), one after the
  other in the same session, summed.

It reports the run's wall time, dbt's own share (the wall time outside the nodes' execution
times, with T = 1), and each stream model's bookkeeping (its node time outside its MERGE, by
the MERGE's own `executionTimeMs` in the target's history). Every mirror and floor must equal
its source at the end. Writes bench/many.md, which bench/results.md includes.

    python -m bench.many [--models 20] [--size 1000000] [--fraction 0.001] [--reps 3]
"""

import argparse
import os
import shutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from bench.run import FLOOR_PROPERTIES, PROJECT, Bench

TARGET = 1.3
FOLDER = PROJECT / "models" / "many"
MODEL = """{{{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}}}
select id, customer_id, status, amount, created_at, updated_at, note,
       metadata_action, metadata_isupdate
from {{{{ stream(source('many', 'orders_{i:02d}')) }}}}
"""


def source(i: int) -> str:
    return f"bench_raw.orders_{i:02d}"


def mirror(i: int) -> str:
    return f"bench.many_mirror_{i:02d}"


def floor(i: int) -> str:
    return f"bench.many_floor_{i:02d}"


def write_models(count: int) -> None:
    """The sources' yml and one mirror model per source, tagged `many` (dbt_project.yml)."""
    shutil.rmtree(FOLDER, ignore_errors=True)
    FOLDER.mkdir(parents=True)
    tables = ", ".join(f"{{name: orders_{i:02d}}}" for i in range(count))
    (FOLDER / "sources.yml").write_text(
        f"version: 2\nsources:\n  - name: many\n    schema: bench_raw\n    tables: [{tables}]\n"
    )
    for i in range(count):
        (FOLDER / f"many_mirror_{i:02d}.sql").write_text(MODEL.format(i=i))


@dataclass
class Round:
    wall: float  # the whole dbt run
    nodes: float  # the sum of its nodes' execution times
    registry: float  # the registry append after the last node
    bookkeeping: list[float]  # per model: node time outside its MERGE
    floors: float  # the sum of the hand-written MERGEs

    @property
    def dbt_share(self) -> float:
        return self.wall - self.nodes


class Many:
    """M sources, their mirrors and floors, in make bench's session."""

    def __init__(self, bench: Bench, count: int, threads: int) -> None:
        self.bench = bench
        self.count = count
        self.threads = threads
        self.floor_versions = [0] * count

    def create(self, n: int) -> None:
        bench = self.bench
        for i in range(self.count):
            bench.create_orders(source(i), n)
        bench.dbt("run", "--select", "tag:many", "--full-refresh")
        bench.dbt("run", "--select", "tag:many")  # consumes the streams' own setup commits
        for i in range(self.count):
            bench.floor_write(
                f"create or replace table {floor(i)} using delta {FLOOR_PROPERTIES} "
                f"as select * from {source(i)} order by id"
            )
            self.floor_versions[i] = bench.latest_version(source(i))

    def round(self, n: int, d: int, rep: int) -> Round:
        bench = self.bench
        for i in range(self.count):
            bench.apply_changes(n, d, rep, table=source(i))
        began = time.perf_counter()
        node_times = self._run()
        wall = time.perf_counter() - began
        registry = bench.registry_seconds
        bookkeeping = [node_times[i] - self._merge_seconds(mirror(i)) for i in range(self.count)]
        began = time.perf_counter()
        for i, applied in enumerate(self.floor_versions):
            self.floor_versions[i] = bench.merge_changes(source(i), floor(i), applied)
        floors = time.perf_counter() - began
        return Round(wall, sum(node_times.values()), registry, bookkeeping, floors)

    def _run(self) -> dict[int, float]:
        """One dbt run of every mirror; each model's execution time by its number."""
        nodes = self.bench.dbt_nodes("run", "--select", "tag:many", "--threads", str(self.threads))
        return {int(node.node.name.rsplit("_", 1)[1]): node.execution_time for node in nodes}

    def _merge_seconds(self, table: str) -> float:
        """The last commit's own execution time, from Delta's operation metrics."""
        [row] = self.bench.sql(f"describe history {table} limit 1")
        assert row["operation"] == "MERGE", f"{table}: {row['operation']}, not a MERGE"
        return int(row["operationMetrics"]["executionTimeMs"]) / 1000

    def rows_wrong(self) -> int:
        wrong = [
            self.bench.rows_wrong_against(source(i), [mirror(i), floor(i)])
            for i in range(self.count)
        ]
        return sum(sum(counts) for counts in wrong)


def report(rounds: list[Round], count: int, n: int, d: int, threads: int, wrong: int) -> str:
    def median(values: list[float]) -> float:
        return statistics.median(values)

    wall = median([r.wall for r in rounds])
    floors = median([r.floors for r in rounds])
    ratio = wall / floors
    per_model = median([statistics.median(r.bookkeeping) for r in rounds])
    return "\n".join(
        [
            f"## {count} stream models in one run (issue 20, part 3)",
            "",
            f"`dbt run --threads {threads}` of {count} `apply_changes` mirrors, each on its "
            f"own source of N = {n:,} rows after D = {d:,} changes per source, against the "
            f"sum of {count} hand-written MERGEs; medians of {len(rounds)} rounds.",
            "",
            "| run (wall) | nodes | dbt's share | registry append | bookkeeping per model "
            "| sum of floors | run / floors | rows_wrong |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
            f"| {wall:.1f} s | {median([r.nodes for r in rounds]):.1f} s | "
            f"{median([r.dbt_share for r in rounds]):.1f} s | "
            f"{median([r.registry for r in rounds]):.2f} s | {per_model:.2f} s | "
            f"{floors:.1f} s | {ratio:.2f} | {wrong} |",
            "",
            f"- run / sum of floors {ratio:.2f} (target <= {TARGET}: "
            f"{'met' if ratio <= TARGET else 'not met'})",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--fraction", type=float, default=0.001)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()

    write_models(options.models)
    os.chdir(PROJECT)
    many = Many(Bench(), options.models, options.threads)
    many.create(options.size)
    d = max(int(options.size * options.fraction), 3)
    rounds = []
    for rep in range(options.reps):
        rounds.append(many.round(options.size, d, rep))
        last = rounds[-1]
        print(f"rep {rep}: run {last.wall:.1f}s, floors {last.floors:.1f}s")
    text = report(rounds, options.models, options.size, d, options.threads, many.rows_wrong())
    (Path(__file__).parent / "many.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
