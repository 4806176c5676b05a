"""`make bench-appends`: a mirror's build on batches that only insert or only delete, against
the floor MERGE.

When every commit since its offset only appended rows, an `apply_changes` build writes the
stream's rows with an INSERT instead of a MERGE; when every commit only deleted rows, with a
MERGE that has only its delete clause (streams/delta/appends.py). The source is make bench's orders
(N rows); each round inserts D new rows (one blind append) or deletes D existing ones (one
DELETE of a range of ids), then builds `stream_mirror` and runs the floor, the MERGE a user
would hand-write (bench/run.py), side by side in one warm session. Both must equal the source.
Writes bench/appends.md, which bench/results.md includes.

    python -m bench.appends [--sizes 1000000 5000000] [--fractions 0.001 0.01] [--reps 3]
        [--kinds insert delete]
"""

import argparse
import os
import statistics
from pathlib import Path

from bench.run import FLOOR, PROJECT, SOURCE, Bench

TARGET = 0.7


def last_operation(bench: Bench, table: str) -> str:
    return str(bench.sql(f"describe history {table} limit 1")[0]["operation"])


def change(bench: Bench, kind: str, d: int) -> None:
    """One commit: D new rows, or the D lowest ids deleted (ids are contiguous from 0)."""
    if kind == "insert":
        bench.insert_rows(bench.next_id, d, updated_at="current_timestamp()")
        return
    start = int(bench.sql(f"select min(id) from {SOURCE}")[0][0])
    bench.sql(f"delete from {SOURCE} where id >= {start} and id < {start + d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.001, 0.01])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--kinds", nargs="+", choices=["insert", "delete"], default=["insert", "delete"]
    )
    options = parser.parse_args()

    os.chdir(PROJECT)
    bench = Bench()
    lines = [
        "## Insert-only and delete-only batches (issue 20, part 1)",
        "",
        "`stream_mirror` (apply_changes) against the floor MERGE after batches that only "
        f"insert D new rows or only delete D rows, median of {options.reps} (the mirror's "
        "write operation, and rows_wrong: the mirror and the floor against the source).",
        "",
        "| batch | N | D | stream | write | floor MERGE | stream / floor | rows_wrong |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    verdicts = []
    for n in options.sizes:
        bench.create_source(n)
        for kind in options.kinds:
            for fraction in options.fractions:
                d = max(int(n * fraction), 1)
                line, ratio = measure(bench, kind, n, d, options.reps)
                lines.append(line)
                verdict = "met" if ratio <= TARGET else "not met"
                target = f"target <= {TARGET}: {verdict}" if kind == "insert" else "no target"
                verdicts.append(
                    f"- {kind}, N={n:,}, D={d:,}: stream / floor {ratio:.2f} ({target})"
                )
    text = "\n".join([*lines, "", *verdicts, ""])
    (Path(__file__).parent / "appends.md").write_text(text)
    print(text)


def measure(bench: Bench, kind: str, n: int, d: int, reps: int) -> tuple[str, float]:
    """The table row of `reps` rounds of one kind of batch, and its stream / floor."""
    stream, floor, operations = [], [], set()
    for rep in range(reps):
        change(bench, kind, d)
        stream.append(bench.dbt("run", "--select", "stream_mirror"))
        operations.add(last_operation(bench, "bench.stream_mirror"))
        floor.append(bench.floor())
        print(f"{kind} n={n} d={d} rep={rep}: stream {stream[-1]:.2f}s floor {floor[-1]:.2f}s")
    wrong = bench.rows_wrong(["bench.stream_mirror", FLOOR])
    ratio = statistics.median(stream) / statistics.median(floor)
    line = (
        f"| {kind} | {n:,} | {d:,} | {statistics.median(stream):.2f} | "
        f"{', '.join(sorted(operations))} | {statistics.median(floor):.2f} | "
        f"{ratio:.2f} | {wrong[0]} / {wrong[1]} |"
    )
    return line, ratio


if __name__ == "__main__":
    main()
