"""Start-up time of the embedded session, old start against new, side by side.

    python -m bench.startup [--reps 5] [--model stg_customers] [--phases]

Copies integration_project into a temporary folder (its own catalog, so nothing else running on
the machine shares its Derby metastore), creates the shop's sources there, then times `dbt
debug` and `dbt run -s <model>` as whole processes, `--reps` times each in each mode,
alternating old and new run by run, and prints the medians and new / old.

- old: SPARK_STREAMS_FAST_START=0, the start before issue 14: `spark.jars.packages` resolved
  by Ivy on every start (from Ivy's cache), no class-data-sharing archive;
- jars: the jar cache alone (SPARK_STREAMS_CDS=0), to show what each half is worth;
- new: the default: the Delta jars from the adapter's jar cache as `spark.jars`, the JVM mapping
  its CDS archive. Before timing, one untimed start fills the caches and the bench waits until
  the background trainer has written the archive.

Each run waits for the previous run's JVM to exit (it outlives dbt by a moment), so no run pays
for another's shutdown. `--phases` also times the phases of one start in each mode, in a bare
Python process (no dbt): the JVM up (with the resolution), the SparkContext and session, the
first query, the first catalog access (the Hive metastore on Derby).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DBT = str(Path(sys.executable).with_name("dbt"))
MODES = {
    "old": {"SPARK_STREAMS_FAST_START": "0"},
    "jars": {"SPARK_STREAMS_FAST_START": "1", "SPARK_STREAMS_CDS": "0"},
    "new": {"SPARK_STREAMS_FAST_START": "1", "SPARK_STREAMS_CDS": "1"},
}


def environment(project: Path, mode: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_STREAMS_JARS_DIR"}
    return {
        **env,
        **MODES[mode],
        "DBT_PROFILES_DIR": str(project),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "0",
    }


def jvms_of(project: Path) -> list[int]:
    """Running JVMs started for this project (their command line names its metastore)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if str(project).encode() in command and b"java" in command:
            found.append(int(entry.name))
    return found


def wait_for_jvms(project: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while jvms_of(project) and time.monotonic() < deadline:
        time.sleep(0.2)


def dbt(project: Path, mode: str, *args: str) -> float:
    """Wall seconds of one dbt process, from spawn to exit; fails loudly on a failed run."""
    wait_for_jvms(project)
    started = time.perf_counter()
    done = subprocess.run(
        [DBT, *args, "--project-dir", str(project)],
        cwd=project,
        env=environment(project, mode),
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"dbt {' '.join(args)} ({mode}) failed:\n{done.stdout[-3000:]}")
    return elapsed


def wait_for_trainers(timeout: float = 1800) -> None:
    """Until no CDS trainer is at work or about to be (a fresh request with no outcome yet)."""
    from dbt.adapters.spark_streams.session.jvm import cds

    deadline = time.monotonic() + timeout
    folder = cds.cache_root() / "cds"
    while time.monotonic() < deadline:
        pending = []
        for request in folder.glob("*.request.json"):
            archive = cds.Archive(request.name.removesuffix(".request.json"), folder)
            fresh = time.time() - request.stat().st_mtime < cds.TRAIN_TIMEOUT_S
            done = archive.path.exists() or archive.failed.exists()
            if cds.training(archive) or (fresh and not done):
                pending.append(archive.key)
        if not pending:
            return
        print(f"waiting for the CDS trainer of {pending[0]} ...", flush=True)
        time.sleep(10)
    raise SystemExit("the CDS trainer did not finish in time")


@contextmanager
def project_copy() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as folder:
        project = Path(folder) / "project"
        shutil.copytree(
            ROOT / "integration_project",
            project,
            ignore=shutil.ignore_patterns("target", "logs", "spark-warehouse", "metastore"),
        )
        yield project
        wait_for_jvms(project)


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


PHASES_CHILD = """
import json, os, sys, time
t0 = time.perf_counter()
marks = {}
import pyspark.java_gateway as gateway
from pyspark import context
launch = gateway.launch_gateway
def timed_launch(*args, **kwargs):
    marks["python imports"] = time.perf_counter() - t0
    started = time.perf_counter()
    try:
        return launch(*args, **kwargs)
    finally:
        marks["JVM up (spark-submit, resolution)"] = time.perf_counter() - started
context.launch_gateway = timed_launch
from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.session.embedded import start_embedded_session
creds = SparkStreamsCredentials.from_dict(
    {"schema": "shop", "warehouse_dir": "spark-warehouse", "metastore_dir": "metastore",
     "shuffle_partitions": 2}
)
started = time.perf_counter()
spark = start_embedded_session(creds)
total = time.perf_counter() - started
marks["SparkContext and session"] = total - marks["JVM up (spark-submit, resolution)"]
for name, sql in (("first query (select 1)", "select 1 as id"),
                  ("first catalog access (Hive metastore)", "show databases")):
    started = time.perf_counter()
    spark.sql(sql).collect()
    marks[name] = time.perf_counter() - started
marks["total"] = time.perf_counter() - t0
print(json.dumps(marks))
"""


def phases(project: Path, mode: str) -> dict[str, float]:
    wait_for_jvms(project)
    done = subprocess.run(
        [sys.executable, "-c", PHASES_CHILD],
        cwd=project,
        env=environment(project, mode),
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def median_table(times: dict[str, dict[str, list[float]]]) -> list[str]:
    others = [mode for mode in MODES if mode != "old"]
    lines = [
        "| command | "
        + " | ".join(f"{mode} (median s)" for mode in MODES)
        + " | "
        + " | ".join(f"{mode} / old" for mode in others)
        + " |",
        "| --- " * (1 + len(MODES) + len(others)) + "|",
    ]
    for command, by_mode in times.items():
        medians = {mode: statistics.median(by_mode[mode]) for mode in MODES}
        cells = [f"{medians[mode]:.1f}" for mode in MODES]
        cells += [f"{medians[mode] / medians['old']:.2f}" for mode in others]
        lines.append(f"| `{command}` | " + " | ".join(cells) + " |")
    for command, by_mode in times.items():
        for mode in MODES:
            lines.append(f"`{command}` {mode}: " + " ".join(f"{t:.1f}" for t in by_mode[mode]))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--model", default="stg_customers")
    parser.add_argument("--phases", action="store_true")
    parser.add_argument("--json", type=Path, help="also write every time to this file")
    args = parser.parse_args()
    commands = {"dbt debug": ["debug"], f"dbt run -s {args.model}": ["run", "-s", args.model]}
    with project_copy() as project:
        print(f"load average before: {load()}", flush=True)
        # Untimed: the new start's caches (jars, CDS archive), the sources, Ivy's cache.
        dbt(project, "new", "debug")
        wait_for_trainers()
        dbt(project, "new", "run-operation", "create_shop_sources")
        dbt(project, "old", "debug")
        times: dict[str, dict[str, list[float]]] = {c: {m: [] for m in MODES} for c in commands}
        loads = []
        for rep in range(args.reps):
            for command, dbt_args in commands.items():
                for mode in list(MODES) if rep % 2 == 0 else reversed(MODES):
                    times[command][mode].append(dbt(project, mode, *dbt_args))
                    loads.append(os.getloadavg()[0])
                    print(f"{command} {mode}: {times[command][mode][-1]:.1f} s", flush=True)
        lines = median_table(times)
        lines.append("")
        lines.append(
            f"1-minute load average during the runs: median {statistics.median(loads):.1f}, "
            f"{min(loads):.1f} to {max(loads):.1f} ({os.cpu_count()} cores)"
        )
        # Printed now: the phase runs below take as long again and may be interrupted.
        print("\n".join(["", *lines]), flush=True)
        result: dict[str, object] = {"times": times, "loads": loads}
        if args.phases:
            runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
            for rep in range(args.reps):
                for mode in list(MODES) if rep % 2 == 0 else reversed(MODES):
                    runs[mode].append(phases(project, mode))
            lines = ["", "| phase (median s) | " + " | ".join(MODES) + " |"]
            lines.append("| --- " * (1 + len(MODES)) + "|")
            for name in runs["old"][0]:
                cells = [f"{statistics.median(run[name] for run in runs[m]):.1f}" for m in MODES]
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
            result["phases"] = runs
            print("\n".join(lines))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
