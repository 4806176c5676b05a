"""`make bench-files`: an insert-only stream on a folder of files against reading the new files
into the target by hand, on folders of several sizes.

For each folder size FILES, the source `bench_raw.landing_events` is made again as a Parquet
table over a folder of FILES files of ROWS rows each; each round lands NEW more files (one
INSERT, so one Spark write), then builds `files_log` (bench/project/models/files: an append of
the insert-only stream) and, side by side in the same warm session, the floor: the new files'
paths (known to the hand-written job, which lists the folder itself) read with
spark.read.parquet and appended to a Delta table. Both targets must hold every landed row
once. The build's statements are timed too (from the cursor's execute to its last fetch), so
the report says where a build's time goes. Writes bench/files.md, which bench/results.md
includes.

    python -m bench.files [--files 1000 10000] [--rows 1000] [--new 10] [--reps 3]
"""

import argparse
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.run import PROJECT, Bench
from dbt.adapters.spark_streams.session.cursor import BoundCursor

SOURCE = "bench_raw.landing_events"
FLOOR = "bench.files_floor"
# Targets: a stream build at most FLOOR_TARGET times the floor on the smallest folder, and the
# largest folder's build at most SIZE_TARGET times the smallest's.
FLOOR_TARGET, SIZE_TARGET = 5.0, 1.3
# The build's statements, by the words they start with (after dbt's query comment).
STEPS = (
    ("describe history", "history reads"),
    ("describe table extended", "source description"),
    ("refresh table", "refresh and listing"),
    ("create or replace temporary view _spark_streams_files_", "listing view"),
    ("select if(path = '', 'set', 'file')", "new files against the set"),
    ("insert into `bench`.`dbt_streams_files`", "file set's part"),
    ("insert into bench.files_log", "target's append"),
)


@dataclass
class Round:
    stream: float
    floor: float
    steps: dict[str, float] = field(default_factory=dict)


@dataclass
class Folder:
    """One folder size's rounds, and the rows each target got wrong (stream, floor)."""

    rounds: list[Round]
    wrong: tuple[int, int]

    def median(self, what: str) -> float:
        return statistics.median(getattr(r, what) for r in self.rounds)

    def step(self, name: str) -> float:
        return statistics.median(r.steps.get(name, 0.0) for r in self.rounds)


def land(bench: Bench, files: int, rows: int, first_id: int) -> None:
    """`files` new Parquet files of `rows` rows each, in one Spark write."""
    bench.sql(
        f"insert into {SOURCE} select /*+ REPARTITION({files}) */ id, id % 997, "
        "element_at(array('view', 'cart', 'buy'), cast(id % 3 + 1 as int)), id * 0.5, "
        f"timestamp'2026-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) "
        f"from range({first_id}, {first_id + files * rows})"
    )


def data_files(folder: Path) -> set[str]:
    return {f"file:{p}" for p in folder.iterdir() if p.name.startswith("part-")}


def rows_wrong(bench: Bench, target: str) -> int:
    """Rows of the source missing from the target, plus rows the target holds twice."""
    [row] = bench.sql(
        f"select (select count(*) from {SOURCE}) - count(distinct id) "
        f"+ (count(*) - count(distinct id)) from {target}"
    )
    return int(row[0])


def step_of(sql: str) -> str:
    """The step a statement of the build belongs to."""
    text = sql.split("*/", 1)[1] if sql.lstrip().startswith("/*") else sql
    text = " ".join(text.split())
    return next((name for start, name in STEPS if text.startswith(start)), "other statements")


@contextmanager
def timed_statements() -> Iterator[dict[str, float]]:
    """Seconds per step of every statement the adapter's cursors run meanwhile: from execute
    to the end of its last fetch (a query runs when its rows are fetched)."""
    spent: dict[str, float] = defaultdict(float)
    execute, fetchall = BoundCursor.execute, BoundCursor.fetchall

    def timed_execute(cursor: Any, sql: str, *parameters: Any) -> None:
        began = time.perf_counter()
        cursor.bench_step = step_of(sql)
        try:
            execute(cursor, sql, *parameters)
        finally:
            spent[cursor.bench_step] += time.perf_counter() - began

    def timed_fetchall(cursor: Any) -> Any:
        began = time.perf_counter()
        try:
            return fetchall(cursor)
        finally:
            spent[getattr(cursor, "bench_step", "other statements")] += time.perf_counter() - began

    BoundCursor.execute, BoundCursor.fetchall = timed_execute, timed_fetchall  # type: ignore[method-assign, assignment]
    try:
        yield spent
    finally:
        BoundCursor.execute, BoundCursor.fetchall = execute, fetchall  # type: ignore[method-assign]


def folder_rounds(bench: Bench, files: int, rows: int, new: int, reps: int) -> Folder:
    """A fresh folder of `files` files, its stream's first build, then `reps` timed rounds."""
    bench.sql(f"drop table if exists {SOURCE}")
    bench.sql(f"drop table if exists {FLOOR}")
    bench.sql(
        f"create table {SOURCE} (id bigint, customer_id bigint, kind string, amount double, "
        "at timestamp) using parquet"
    )
    folder = Path(bench.sql(f"describe detail {SOURCE}")[0]["location"].removeprefix("file:"))
    land(bench, files, rows, 0)
    bench.dbt("run", "--full-refresh", "--select", "files_log")
    bench.spark.table(SOURCE).write.format("delta").saveAsTable(FLOOR)
    seen = data_files(folder)
    next_id = files * rows
    rounds = []
    for rep in range(reps):
        land(bench, new, rows, next_id)
        next_id += new * rows
        with timed_statements() as steps:
            stream = bench.dbt("run", "--select", "files_log")
        began = time.perf_counter()
        landed = sorted(data_files(folder) - seen)
        bench.spark.read.parquet(*landed).write.format("delta").mode("append").saveAsTable(FLOOR)
        rounds.append(Round(stream, time.perf_counter() - began, dict(steps)))
        seen |= set(landed)
        print(f"files={files:,} rep={rep}: stream {stream:.2f}s floor {rounds[-1].floor:.2f}s")
    wrong = (rows_wrong(bench, "bench.files_log"), rows_wrong(bench, FLOOR))
    print(f"files={files:,}: rows_wrong {wrong[0]} / {wrong[1]}", flush=True)
    return Folder(rounds, wrong)


def report(options: argparse.Namespace, by_size: dict[int, Folder]) -> str:
    """bench/files.md: each folder size's medians, the ratios the targets name, the steps."""
    medians = {
        files: (folder.median("stream"), folder.median("floor"))
        for files, folder in by_size.items()
    }
    smallest, largest = min(by_size), max(by_size)
    lines = [
        "## Insert-only streams on file tables",
        "",
        f"A Parquet table over a folder of FILES files of {options.rows:,} rows; each round "
        f"lands {options.new} more. The stream build (`files_log`, an append of the insert-only "
        "stream, dbt's node time) against the floor: the new files read by path with "
        "spark.read.parquet and appended to a Delta table, in the same session. Median of "
        f"{options.reps} per folder size (rows_wrong: missing or doubled rows, stream / floor).",
        "",
        "| files | new | stream | floor | stream / floor | stream / stream at "
        f"{smallest:,} | rows_wrong |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for files, (stream, floor) in sorted(medians.items()):
        wrong = by_size[files].wrong
        lines.append(
            f"| {files:,} | {options.new} | {stream:.2f} | {floor:.2f} | {stream / floor:.2f} | "
            f"{stream / medians[smallest][0]:.2f} | {wrong[0]} / {wrong[1]} |"
        )
    at_floor = medians[smallest][0] / medians[smallest][1]
    growth = medians[largest][0] / medians[smallest][0]
    lines += [
        "",
        f"- stream / floor at {smallest:,} files {at_floor:.2f} (target <= {FLOOR_TARGET}: "
        f"{'met' if at_floor <= FLOOR_TARGET else 'not met'})",
        f"- stream at {largest:,} files / stream at {smallest:,} files {growth:.2f} (target <= "
        f"{SIZE_TARGET}: {'met' if growth <= SIZE_TARGET else 'not met'})",
        "",
        *step_table(by_size),
        "",
    ]
    return "\n".join(lines)


def step_table(by_size: dict[int, Folder]) -> list[str]:
    """The build's statements by step, median seconds per folder size."""
    sizes = sorted(by_size)
    names = [name for _, name in STEPS] + ["other statements"]
    lines = [
        "Where a build's time goes (median seconds of its statements, execute to last fetch; "
        "the rest of dbt's node time is dbt's own work):",
        "",
        "| step | " + " | ".join(f"{files:,} files" for files in sizes) + " |",
        "| --- |" + " --- |" * len(sizes),
    ]
    for name in names:
        cells = [by_size[files].step(name) for files in sizes]
        lines.append(f"| {name} | " + " | ".join(f"{cell:.2f}" for cell in cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--new", type=int, default=10)
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()

    os.chdir(PROJECT)
    bench = Bench()
    bench.sql("create schema if not exists bench_raw")
    by_size = {
        files: folder_rounds(bench, files, options.rows, options.new, options.reps)
        for files in sorted(options.files)
    }
    text = report(options, by_size)
    (Path(__file__).parent / "files.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
