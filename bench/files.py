"""`make bench-files`: an insert-only stream on a folder of files against reading the new files
into the target by hand.

The source `bench_raw.landing_events` is a Parquet table over a folder of FILES files of
ROWS rows each; each round lands NEW more files (one INSERT, so one Spark write), then builds
`files_log` (bench/project/models/files: an append of the insert-only stream) and, side by
side in the same warm session, the floor: the new files' paths (known to the hand-written
job, which lists the folder itself) read with spark.read.parquet and appended to a Delta
table. Both targets must hold every landed row once. Writes bench/files.md, which
bench/results.md includes.

    python -m bench.files [--files 1000] [--rows 1000] [--new 10] [--reps 3]
"""

import argparse
import os
import statistics
import time
from pathlib import Path

from bench.run import PROJECT, Bench

SOURCE = "bench_raw.landing_events"
FLOOR = "bench.files_floor"
TARGET = 2.0


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--new", type=int, default=10)
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()

    os.chdir(PROJECT)
    bench = Bench()
    bench.sql("create schema if not exists bench_raw")
    bench.sql(f"drop table if exists {SOURCE}")
    bench.sql(f"drop table if exists {FLOOR}")
    bench.sql(
        f"create table {SOURCE} (id bigint, customer_id bigint, kind string, amount double, "
        "at timestamp) using parquet"
    )
    folder = Path(bench.sql(f"describe detail {SOURCE}")[0]["location"].removeprefix("file:"))
    land(bench, options.files, options.rows, 0)
    bench.dbt("run", "--full-refresh", "--select", "files_log")
    bench.spark.table(SOURCE).write.format("delta").saveAsTable(FLOOR)
    seen = data_files(folder)
    next_id = options.files * options.rows
    stream, floor = [], []
    for rep in range(options.reps):
        land(bench, options.new, options.rows, next_id)
        next_id += options.new * options.rows
        stream.append(bench.dbt("run", "--select", "files_log"))
        began = time.perf_counter()
        new = sorted(data_files(folder) - seen)
        bench.spark.read.parquet(*new).write.format("delta").mode("append").saveAsTable(FLOOR)
        floor.append(time.perf_counter() - began)
        seen |= set(new)
        print(f"rep={rep}: stream {stream[-1]:.2f}s floor {floor[-1]:.2f}s", flush=True)
    wrong = [rows_wrong(bench, "bench.files_log"), rows_wrong(bench, FLOOR)]
    ratio = statistics.median(stream) / statistics.median(floor)
    text = "\n".join(
        [
            "## Insert-only streams on file tables (issue 19)",
            "",
            f"A Parquet table over a folder of {options.files:,} files of {options.rows:,} rows; "
            f"each round lands {options.new} more. The stream build (`files_log`, an append of "
            "the insert-only stream, dbt's node time) against the floor: the new files read by "
            "path with spark.read.parquet and appended to a Delta table, in the same session. "
            f"Median of {options.reps} (rows_wrong: missing or doubled rows, stream / floor).",
            "",
            "| files | new | stream | floor | stream / floor | rows_wrong |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| {options.files:,} | {options.new} | {statistics.median(stream):.2f} | "
            f"{statistics.median(floor):.2f} | {ratio:.2f} | {wrong[0]} / {wrong[1]} |",
            "",
            f"- stream / floor {ratio:.2f} (target <= {TARGET}: "
            f"{'met' if ratio <= TARGET else 'not met'})",
            "",
        ]
    )
    (Path(__file__).parent / "files.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
