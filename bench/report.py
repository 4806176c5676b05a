"""bench/results.md (medians and the target ratios) and bench/results.png from the results."""

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

METHODS = ("stream", "full_rebuild", "watermark_merge", "floor")


def medians(results: list[Any]) -> dict[tuple[int, int, str], tuple[float, int]]:
    """(n, d, method) -> (median seconds, worst rows_wrong)."""
    grouped: dict[tuple[int, int, str], list[Any]] = defaultdict(list)
    for result in results:
        grouped[(result.n, result.d, result.method)].append(result)
    return {
        key: (statistics.median(r.seconds for r in runs), max(r.rows_wrong for r in runs))
        for key, runs in grouped.items()
    }


def ratio_rows(table: dict) -> list[str]:
    """One line per (n, d): the seconds of each method and the ratios the targets name."""
    lines = []
    for n, d in sorted({(n, d) for n, d, m in table if m in METHODS}):
        cells = {m: table.get((n, d, m)) for m in METHODS}
        if any(cell is None for cell in cells.values()):
            continue
        stream = cells["stream"][0]
        lines.append(
            f"| {n:,} | {d:,} ({d / n:.2%}) | "
            + " | ".join(f"{cells[m][0]:.2f} ({cells[m][1]})" for m in METHODS)
            + f" | {stream / cells['floor'][0]:.2f} | {stream / cells['full_rebuild'][0]:.3f}"
            + f" | {stream / cells['watermark_merge'][0]:.2f} |"
        )
    return lines


def scaling_rows(table: dict) -> list[str]:
    sizes = sorted({n for n, _, m in table if m == "stream"})
    lines = []
    for d in sorted({d for _, d, m in table if m == "stream" and d > 0}):
        have = [(n, table[(n, d, "stream")][0]) for n in sizes if (n, d, "stream") in table]
        if len(have) > 1:
            lines.append(
                f"| {d:,} | {have[-1][1] / have[0][1]:.2f} ({have[-1][0]:,} vs {have[0][0]:,}) |"
            )
    return lines


def write_report(results: list[Any], out: Path) -> None:
    table = medians(results)
    empty = {n: s for (n, d, m), (s, _) in table.items() if m == "stream_empty"}
    lines = [
        "# Benchmark results",
        "",
        "Median seconds of each build (worst rows_wrong in brackets).",
        "",
        "| N | D | stream | full rebuild | watermark merge | floor | stream/floor | "
        "stream/rebuild | stream/watermark |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *ratio_rows(table),
        "",
        "Stream at the largest N over stream at the smallest N, same absolute D:",
        "",
        "| D | ratio |",
        "| --- | --- |",
        *scaling_rows(table),
        "",
        "Stream bookkeeping with an empty change batch (pinning, registry, reconciliation): "
        + ", ".join(f"N={n:,}: {s:.2f}s" for n, s in sorted(empty.items())),
        "",
    ]
    (out / "results.md").write_text("\n".join(lines))
    plot(table, out / "results.png")


def plot(table: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({n for n, _, _ in table})
    figure, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4), squeeze=False)
    for axis, n in zip(axes[0], sizes, strict=True):
        for method in METHODS:
            points = sorted(
                (d, s) for (tn, d, m), (s, _) in table.items() if tn == n and m == method
            )
            if points:
                axis.plot(*zip(*points, strict=True), marker="o", label=method)
        axis.set(
            xscale="log", xlabel="change batch D (rows)", ylabel="seconds", title=f"N = {n:,}"
        )
        axis.legend()
    figure.tight_layout()
    figure.savefig(path)
