"""`make bench-cdc`: apply_cdc against the hand-written floor and against `dbt snapshot`.

A landing table of change events (id, status, amount, op, seq) holds one event per key for
N keys; `cdc_current` (an apply_cdc model over an append_only stream of it) and the floor's
target start from them. Each round lands D events on a contiguous range of keys: 80% updates,
10% deletes, 10% late updates (a sequence older than the key's current one, on keys that
were not deleted, so the floor's answer stays right without tombstones). Then, side by side
in one warm session, the dbt build and the floor, in turn the first to read the landed
events (the build first in even rounds, the floor in odd ones). The floor: the new events read
with table_changes, deduplicated by a window (the newest per key), and one MERGE that skips
events older than the target's sequence. After each round the two targets must hold the same
rows. Then every version: `cdc_history` (apply_cdc, scd_type 2) against what dbt users run for
it today, a `dbt snapshot` (check strategy) of the floor's current-state table; the history's
current versions must equal the floor's rows. Writes bench/cdc.md.

    python -m bench.cdc [--sizes 1000000] [--fractions 0.0001 0.01] [--reps 4]
"""

import argparse
import os
import statistics
import time
from pathlib import Path

from bench.run import PROJECT, Bench

EVENTS = "bench_raw.cdc_events"
FLOOR = "bench.cdc_floor"
COLUMNS = "id, status, amount, seq"
TARGET = 1.15


class CdcBench:
    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.applied = 0
        self.seq = 1

    def create(self, n: int) -> None:
        sql = self.bench.sql
        sql("create schema if not exists bench_raw")
        sql(f"drop table if exists {EVENTS}")
        sql(
            f"create table {EVENTS} (id bigint, status string, amount decimal(12, 2), op string, "
            "seq bigint) using delta tblproperties (delta.enableChangeDataFeed = true)"
        )
        sql(
            f"insert into {EVENTS} select id, 'placed', cast(id % 1000 as decimal(12, 2)), 'U', 1 "
            f"from range(0, {n})"
        )
        self.bench.dbt("run", "--full-refresh", "--select", "cdc_current", "cdc_history")
        sql(
            f"create or replace table {FLOOR} using delta tblproperties "
            "('delta.enableDeletionVectors' = 'true') as "
            f"select id, status, amount, seq from {EVENTS} order by id"
        )
        self.applied = self.bench.latest_version(EVENTS)
        self.seq = 10
        sql("drop table if exists bench.cdc_snapshot")
        self.bench.dbt("snapshot", "--select", "cdc_snapshot")

    def land(self, n: int, d: int, rep: int) -> None:
        """D events on keys [start, start + D): updates, deletes, late updates."""
        start = (rep * d * 2) % max(n - d, 1)
        self.seq += 10
        self.bench.sql(
            f"insert into {EVENTS} select id, if(id % 10 = 9, 'late', 'updated'), "
            f"cast(id % 1000 + {rep} as decimal(12, 2)), if(id % 10 = 0, 'D', 'U'), "
            f"if(id % 10 = 9, 2, {self.seq}) from range({start}, {start + d})"
        )

    def floor(self) -> float:
        began = time.perf_counter()
        latest = self.bench.latest_version(EVENTS)
        if latest > self.applied:
            self.bench.sql(
                f"""merge into {FLOOR} t using (
                  select * from (
                    select *, row_number() over (partition by id order by seq desc) as newest
                    from table_changes('{EVENTS}', {self.applied + 1}, {latest})
                    where _change_type = 'insert')
                  where newest = 1) s
                on t.id = s.id
                when matched and s.seq > t.seq and s.op = 'D' then delete
                when matched and s.seq > t.seq then
                  update set t.status = s.status, t.amount = s.amount, t.seq = s.seq
                when not matched and s.op != 'D' then
                  insert (id, status, amount, seq) values (s.id, s.status, s.amount, s.seq)"""
            )
        self.applied = latest
        return time.perf_counter() - began

    def differing_rows(self) -> int:
        """Rows differing from the floor's: the current state's, and the history's current
        versions'."""
        floor = f"select {COLUMNS} from {FLOOR}"
        current = "select id, status, amount, _cdc_sequence from bench.cdc_current"
        versions = "select id, status, amount, __start_at from bench.cdc_history"
        return self.bench.differing_rows(current, floor) + self.bench.differing_rows(
            versions + " where __end_at is null", floor
        )


def rounds(cdc: CdcBench, n: int, d: int, reps: range) -> tuple[dict[str, list[float]], int]:
    """Each rep's events landed and built: the seconds of each build after the first (which
    warms them), and the most rows any round's targets differed from the floor's."""
    timed: dict[str, list[float]] = {"floor": [], "built": [], "history": [], "snapshot": []}
    wrong = 0
    for rep in reps:
        cdc.land(n, d, rep)
        seconds: dict[str, float] = {}
        floor_first = rep % 2 == 1  # each the first reader of the landed events in half
        if floor_first:
            seconds["floor"] = cdc.floor()
        seconds["built"] = cdc.bench.dbt("run", "--select", "cdc_current")
        seconds["history"] = cdc.bench.dbt("run", "--select", "cdc_history")
        if not floor_first:
            seconds["floor"] = cdc.floor()
        seconds["snapshot"] = cdc.bench.dbt("snapshot", "--select", "cdc_snapshot")
        wrong = max(wrong, cdc.differing_rows())
        print(
            f"n={n} d={d} ({'floor' if floor_first else 'apply_cdc'} first): "
            f"floor {seconds['floor']:.2f}s apply_cdc {seconds['built']:.2f}s "
            f"snapshot {seconds['snapshot']:.2f}s scd_type 2 {seconds['history']:.2f}s"
        )
        if rep != reps.start:
            for name, value in seconds.items():
                timed[name].append(value)
            paired = seconds["built"] / seconds["floor"]
            timed.setdefault("paired", []).append(paired)
            timed.setdefault("floor first" if floor_first else "apply_cdc first", []).append(
                paired
            )
    return timed, wrong


def build_ratio(timed: dict[str, list[float]]) -> float:
    """The build's median against the floor's."""
    return statistics.median(timed["built"]) / statistics.median(timed["floor"])


def verdict(n: int, d: int, timed: dict[str, list[float]]) -> str:
    """Met when both the ratio of the medians and the median of each round's own ratio (its
    build against the floor of the same minute) are within the target."""
    ratio = build_ratio(timed)
    paired = statistics.median(timed["paired"])
    by_order = ", ".join(
        f"{first} {statistics.median(timed[first]):.2f}"
        for first in ("apply_cdc first", "floor first") if first in timed
    )  # fmt: skip
    met = "met" if max(ratio, paired) <= TARGET else "not met"
    return (
        f"- N={n:,}, D={d:,}: apply_cdc / floor {ratio:.2f}, each round's own ratio's median "
        f"{paired:.2f} (target <= {TARGET}: {met}; by which read the events first: {by_order})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.0001, 0.01])
    parser.add_argument("--reps", type=int, default=4)  # even: each order in half
    options = parser.parse_args()

    os.chdir(PROJECT)
    cdc = CdcBench(Bench())
    lines = [
        "# apply_cdc against the hand-written floor (`make bench-cdc`)",
        "",
        "N keys, D events per round (80% updates, 10% deletes, 10% late). Seconds of each dbt "
        f"build, of the floor and of the snapshot, median of {options.reps} rounds after one "
        "untimed round, the build and the floor in turn the first to read a round's events; "
        "rows differing from the floor's (the current state's, and the history's current "
        "versions') in brackets.",
        "",
        "| N | D | floor | apply_cdc | apply_cdc / floor | snapshot | scd_type 2 | "
        "type 2 / (floor + snapshot) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    verdicts = []
    rep = 0
    for n in options.sizes:
        cdc.create(n)
        for fraction in options.fractions:
            d = max(int(n * fraction), 10)
            timed, wrong = rounds(cdc, n, d, range(rep, rep + options.reps + 1))
            rep += options.reps + 1
            med = {name: statistics.median(seconds) for name, seconds in timed.items()}
            ratio = build_ratio(timed)
            against = med["history"] / (med["floor"] + med["snapshot"])
            lines.append(
                f"| {n:,} | {d:,} | {med['floor']:.2f} | {med['built']:.2f} ({wrong}) | "
                f"{ratio:.2f} | {med['snapshot']:.2f} | {med['history']:.2f} | {against:.2f} |"
            )
            verdicts.append(verdict(n, d, timed))
    text = "\n".join([*lines, "", *verdicts, ""])
    (Path(__file__).parent / "cdc.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
