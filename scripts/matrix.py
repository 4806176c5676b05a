"""The compatibility matrix: the oldest and the newest dbt-core setup.cfg accepts and each
Spark line a Delta release supports, each combination in a virtualenv of its own, running the
compatibility project (scripts/compat_run.py). `make matrix` (in CI) runs a cover of the
ranges: each dbt-core line and each Spark line at least once, each Spark line but the newest
over a Spark Connect server of its own (the newest's is `make integration`'s cluster), the
newest of both with dbt-spark's own tests; `make matrix-all` (`--every`) runs every pair.
The adapter meets dbt-core and Spark in separate modules (the adapter's interface and the
macros; the session and the SQL), which is why a cover stands for the pairs in CI.

A combination's virtualenv is kept per machine, like the Delta jars, under
~/.cache/dbt-spark-streams/venvs (named by its constraints and setup.cfg, so a change of
either builds a new one); each run installs this clone into it again, without dependencies.
The combinations run two at a time. With the newest dbt-core and Spark, dbt-spark's own
functional tests run too (scripts/peer_suite.py; on dbt-core 1.12 nothing is deselected).

Prints each combination's result and minutes; a run of every pair replaces the table in
docs/reference/dbt-compatibility.md. Each combination's output: build/matrix/<name>.log.

Usage: scripts/matrix.py [--every] [--only <name>...] [--lanes N] [--no-docs]
"""

import argparse
import datetime
import hashlib
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from dbt.adapters.spark_streams.session.jvm.jar_cache import cache_root

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "build" / "matrix"
PAGE = REPO / "docs" / "reference" / "dbt-compatibility.md"
DBT_LINES = ("1.11", "1.12")  # the oldest and the newest (constraints/dbt-<line>.txt)
SPARK_LINES = ("4.0", "4.1", "4.2")  # each with a Delta release (constraints/spark-<line>.txt)
BEGIN, END = "<!-- matrix: begin -->", "<!-- matrix: end -->"


@dataclass(frozen=True)
class Combination:
    dbt: str
    spark: str
    connect: bool = False  # the project also over a Spark Connect server of this Spark

    @property
    def name(self) -> str:
        return f"dbt-{self.dbt}+spark-{self.spark}"

    @property
    def constraints(self) -> list[Path]:
        return [REPO / "constraints" / f"dbt-{self.dbt}.txt",
                REPO / "constraints" / f"spark-{self.spark}.txt"]  # fmt: skip

    @property
    def peer(self) -> bool:
        return (self.dbt, self.spark) == (DBT_LINES[-1], SPARK_LINES[-1])


@dataclass
class Result:
    combination: Combination
    passed: bool
    minutes: float
    versions: str
    steps: str


def combinations(every: bool) -> list[Combination]:
    """Every pair (Spark Connect with the oldest dbt-core), or the cover: the oldest dbt-core
    with the oldest Spark, the newest with each other Spark line. The newest Spark's Connect
    server is make integration's (a cluster, with faults)."""
    if every:
        return [Combination(dbt, spark, connect=dbt == DBT_LINES[0] and spark != SPARK_LINES[-1])
                for dbt in DBT_LINES for spark in SPARK_LINES]  # fmt: skip
    cover = [(DBT_LINES[0], SPARK_LINES[0])] + [(DBT_LINES[-1], s) for s in SPARK_LINES[1:]]
    return [Combination(dbt, spark, connect=spark != SPARK_LINES[-1]) for dbt, spark in cover]


def run(command: list[str], log: IO[str], **kwargs: Any) -> bool:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False, **kwargs)
    return done.returncode == 0


def environment(combination: Combination, log: IO[str]) -> Path | None:
    """The combination's virtualenv with this clone installed; None if it cannot be made."""
    key = hashlib.sha256()
    for source in [*combination.constraints, REPO / "setup.cfg"]:
        key.update(source.read_bytes())
    venv = cache_root() / "venvs" / f"{combination.name}-{key.hexdigest()[:12]}"
    # --no-compile: Python compiles what a combination imports as it imports it; pip's
    # compiling every file of PySpark and dbt up front took half of a new virtualenv's minute
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-compile"]
    if not (venv / "ready").exists():
        shutil.rmtree(venv, ignore_errors=True)
        constraints = [arg for path in combination.constraints for arg in ("-c", str(path))]
        if not (run([sys.executable, "-m", "venv", str(venv)], log)
                and run([*pip, "--upgrade", "pip"], log)
                and run([*pip, *constraints, "-e", f"{REPO}[dev,connect]"], log)):  # fmt: skip
            return None
        (venv / "ready").touch()
    elif not run([*pip, "--no-deps", "-e", str(REPO)], log):
        return None
    warmed = run([str(venv / "bin" / "python"), "scripts/warm_start.py"], log, cwd=REPO)
    return venv if warmed else None


def check(combination: Combination) -> Result:
    """Build the combination's environment and run the project (and the peer suite) in it."""
    began = time.monotonic()
    with (WORK / f"{combination.name}.log").open("w") as log:
        venv = environment(combination, log)
        python = str(venv / "bin" / "python") if venv else ""
        script = ["-u", "scripts/compat_run.py", str(WORK / combination.name)]
        passed = bool(venv) and run(
            [python, *script, *(["--connect"] if combination.connect else [])], log, cwd=REPO
        )
        if passed and combination.peer:
            passed = run([python, "scripts/peer_suite.py"], log, cwd=REPO)
    return summary(combination, passed, (time.monotonic() - began) / 60)


def summary(combination: Combination, passed: bool, minutes: float) -> Result:
    """What the log says of the versions and the steps that ran."""
    text = (WORK / f"{combination.name}.log").read_text(errors="replace")
    found = re.search(r"^dbt-core .*$", text, re.MULTILINE)
    versions = (
        found.group(0) if found else f"dbt-core {combination.dbt}, Spark {combination.spark}"
    )
    steps = ["the compatibility project"]
    if combination.connect:
        steps.append("over Spark Connect")
    if combination.peer:
        peer = re.findall(r"=+ (\d+ passed[^=]*) in ", text)
        steps.append(f"dbt-spark's tests ({peer[-1].strip()})" if peer else "dbt-spark's tests")
    return Result(combination, passed, minutes, versions, ", ".join(steps))


def table(results: list[Result]) -> str:
    rows = [
        "| combination | versions | what ran | result | minutes |",
        "| --- | --- | --- | --- | ---: |",
    ]
    for result in results:
        verdict = "passed" if result.passed else "**failed**"
        rows.append(f"| `{result.combination.name}` | {result.versions} | {result.steps} | "
                    f"{verdict} | {result.minutes:.1f} |")  # fmt: skip
    return "\n".join(rows)


def write_page(results: list[Result]) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = f"{BEGIN}\n{table(results)}\n\n`make matrix`, {stamp}.\n{END}"
    page = PAGE.read_text()
    PAGE.write_text(re.sub(re.escape(BEGIN) + ".*" + re.escape(END), lambda _: block, page,
                           flags=re.DOTALL))  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", action="store_true", help="every pair, not the cover")
    parser.add_argument("--only", nargs="*", help="combination names (dbt-1.12+spark-4.0 ...)")
    parser.add_argument("--lanes", type=int, default=2)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    chosen = [c for c in combinations(args.every) if not args.only or c.name in args.only]
    WORK.mkdir(parents=True, exist_ok=True)
    # the longest first (dbt-spark's tests, then a Connect server's), so the lanes end together
    longest_first = sorted(chosen, key=lambda c: (c.peer, c.connect), reverse=True)
    with ThreadPoolExecutor(args.lanes) as lanes:
        done = dict(zip(longest_first, lanes.map(check, longest_first), strict=True))
    results = [done[combination] for combination in chosen]
    print(table(results))
    if args.every and not args.no_docs and not args.only:
        write_page(results)
    return 0 if all(result.passed for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
