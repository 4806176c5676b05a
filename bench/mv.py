"""`make bench-mv`: a materialized view's refresh against recomputing its query as a table.

The source is make bench's orders table (N rows); the query sums, counts and averages the
amount per bucket of 200 ids (N / 200 groups). Each round changes D rows (a third each
updated, deleted and inserted, on contiguous id ranges, one commit each) and builds, side by
side in one warm session, `revenue_table` (a `table`: the whole query) and `revenue_mv` (a
`materialized_view`: the changed groups from the change). After each round the two must hold
the same rows. Writes bench/mv.md.

    python -m bench.mv [--sizes 1000000] [--fractions 0.0001 0.01] [--reps 2]
"""

import argparse
import os
import statistics
from pathlib import Path

from bench.run import PROJECT, Bench

COLUMNS = "bucket, orders, round(revenue, 6), round(average, 6)"
TARGET_SMALL, TARGET_ANY = 0.2, 1.1


def differing_rows(bench: Bench) -> int:
    """Rows in one of the two targets and not the other (both directions)."""
    return bench.differing_rows(
        f"select {COLUMNS} from bench.revenue_mv", f"select {COLUMNS} from bench.revenue_table"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.0001, 0.01])
    parser.add_argument("--reps", type=int, default=2)
    options = parser.parse_args()

    os.chdir(PROJECT)
    bench = Bench()
    lines = [
        "# A materialized view's refresh against the table (`make bench-mv`)",
        "",
        "SUM, COUNT and AVG per bucket of 200 ids over make bench's orders (N rows, N / 200 "
        "groups); D rows changed per round on contiguous id ranges. Seconds of each dbt build, "
        f"median of {options.reps}; rows differing between the two targets in brackets.",
        "",
        "| N | D | table | materialized view | view / table |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    verdicts = []
    for n in options.sizes:
        bench.create_source(n)
        bench.dbt("run", "--full-refresh", "--select", "revenue_mv", "revenue_table")
        rep = 0
        for fraction in options.fractions:
            d = max(int(n * fraction), 3)
            table, view, wrong = [], [], 0
            for _ in range(options.reps):
                bench.apply_changes(n, d, rep)
                rep += 1
                table.append(bench.dbt("run", "--select", "revenue_table"))
                view.append(bench.dbt("run", "--select", "revenue_mv"))
                wrong = max(wrong, differing_rows(bench))
                print(f"n={n} d={d}: table {table[-1]:.2f}s view {view[-1]:.2f}s", flush=True)
            ratio = statistics.median(view) / statistics.median(table)
            lines.append(
                f"| {n:,} | {d:,} | {statistics.median(table):.2f} | "
                f"{statistics.median(view):.2f} ({wrong}) | {ratio:.2f} |"
            )
            target = TARGET_SMALL if fraction <= 0.0001 else TARGET_ANY
            verdicts.append(
                f"- N={n:,}, D={d:,}: view / table {ratio:.2f} (target <= {target}: "
                f"{'met' if ratio <= target else 'not met'})"
            )
    text = "\n".join([*lines, "", *verdicts, ""])
    (Path(__file__).parent / "mv.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
