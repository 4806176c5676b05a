"""`make bench-appends`: a mirror's build on batches that only insert, against the floor MERGE.

When every commit since its offset only appended rows, an `apply_changes` build writes the
stream's rows with an INSERT instead of a MERGE (streams/appends.py). The source is make
bench's orders (N rows); each round inserts D new rows (one blind append), then builds
`stream_mirror` and runs the floor, the MERGE a user would hand-write (bench/run.py), side by
side in one warm session. Both must equal the source. Writes bench/appends.md, which
bench/results.md includes.

    python -m bench.appends [--sizes 1000000 5000000] [--fractions 0.001 0.01] [--reps 3]
"""

import argparse
import os
import statistics
from pathlib import Path

from bench.run import FLOOR, PROJECT, Bench

TARGET = 0.7


def last_operation(bench: Bench, table: str) -> str:
    return str(bench.sql(f"describe history {table} limit 1")[0]["operation"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.001, 0.01])
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()

    os.chdir(PROJECT)
    bench = Bench()
    lines = [
        "## Insert-only batches (issue 20, part 1)",
        "",
        "`stream_mirror` (apply_changes) against the floor MERGE after batches that only "
        f"insert D new rows, median of {options.reps} (the mirror's write operation, and "
        "rows_wrong: the mirror and the floor against the source).",
        "",
        "| N | D | stream | write | floor MERGE | stream / floor | rows_wrong |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    verdicts = []
    for n in options.sizes:
        bench.create_source(n)
        for fraction in options.fractions:
            d = max(int(n * fraction), 1)
            stream, floor, operations = [], [], set()
            for rep in range(options.reps):
                bench.insert_rows(bench.next_id, d, updated_at="current_timestamp()")
                stream.append(bench.dbt("run", "--select", "stream_mirror"))
                operations.add(last_operation(bench, "bench.stream_mirror"))
                floor.append(bench.floor())
                print(f"n={n} d={d} rep={rep}: stream {stream[-1]:.2f}s floor {floor[-1]:.2f}s")
            wrong = bench.rows_wrong(["bench.stream_mirror", FLOOR])
            ratio = statistics.median(stream) / statistics.median(floor)
            lines.append(
                f"| {n:,} | {d:,} | {statistics.median(stream):.2f} | "
                f"{', '.join(sorted(operations))} | {statistics.median(floor):.2f} | "
                f"{ratio:.2f} | {wrong[0]} / {wrong[1]} |"
            )
            verdicts.append(
                f"- N={n:,}, D={d:,}: stream / floor {ratio:.2f} (target <= {TARGET}: "
                f"{'met' if ratio <= TARGET else 'not met'})"
            )
    text = "\n".join([*lines, "", *verdicts, ""])
    (Path(__file__).parent / "appends.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
