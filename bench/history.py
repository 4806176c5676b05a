"""`make bench-history`: a `history` build against the `apply_changes` build of the same change.

The source is make bench's orders table (N rows); each round changes D = 0.1% of N rows (a
third each updated, deleted and inserted, in one commit each) and builds both stream models
side by side in one warm session: `stream_mirror` (apply_changes) and `stream_history`
(bench/project/models/history). The mirror must equal the source, and the history's open
rows too. Writes bench/history.md, which bench/results.md includes.

    python -m bench.history [--sizes 1000000 5000000] [--fraction 0.001] [--reps 3]
"""

import argparse
import os
import statistics
from pathlib import Path

from bench.run import COLUMNS, PROJECT, Bench

TARGET = 1.5
OPEN_ROWS = f"(select {COLUMNS} from bench.stream_history where valid_to is null)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--fraction", type=float, default=0.001)
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()

    os.chdir(PROJECT)
    bench = Bench()
    lines = [
        "## History (issue 18)",
        "",
        "The `history` build against the `apply_changes` build of the same change: make "
        "bench's orders (N rows), D rows changed per round (a third each updated, deleted, "
        f"inserted), median of {options.reps} (worst rows_wrong in brackets: the mirror, "
        "and the history's open rows, against the source).",
        "",
        "| N | D | apply_changes | history | history / apply_changes |",
        "| --- | --- | --- | --- | --- |",
    ]
    verdicts = []
    for n in options.sizes:
        bench.create_source(n)
        bench.dbt("run", "--full-refresh", "--select", "stream_history")
        d = max(int(n * options.fraction), 3)
        mirror, history, wrong = [], [], [0, 0]
        for rep in range(options.reps):
            bench.apply_changes(n, d, rep)
            mirror.append(bench.dbt("run", "--select", "stream_mirror"))
            history.append(bench.dbt("run", "--select", "stream_history"))
            found = bench.rows_wrong(["bench.stream_mirror", OPEN_ROWS])
            wrong = [max(a, b) for a, b in zip(wrong, found, strict=True)]
            print(
                f"n={n} rep={rep}: mirror {mirror[-1]:.2f}s history {history[-1]:.2f}s", flush=True
            )
        ratio = statistics.median(history) / statistics.median(mirror)
        lines.append(
            f"| {n:,} | {d:,} | {statistics.median(mirror):.2f} ({wrong[0]}) | "
            f"{statistics.median(history):.2f} ({wrong[1]}) | {ratio:.2f} |"
        )
        verdicts.append(
            f"- N={n:,}: history / apply_changes {ratio:.2f} (target <= {TARGET}: "
            f"{'met' if ratio <= TARGET else 'not met'})"
        )
    text = "\n".join([*lines, "", *verdicts, ""])
    (Path(__file__).parent / "history.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
