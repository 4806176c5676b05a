"""The compatibility matrix (`make matrix`): the oldest and the newest dbt-core setup.cfg
accepts, each with each Spark line a Delta release supports, every combination in a
virtualenv of its own, running the compatibility project (scripts/compat_run.py).

A combination's virtualenv is kept per machine, like the Delta jars, under
~/.cache/dbt-spark-streams/venvs (named by its constraints and setup.cfg, so a change of
either builds a new one); each run installs this clone into it again, without dependencies.
The combinations run two at a time. With the oldest dbt-core, the project is also built over
a Spark Connect server of that Spark, but the newest Spark's (whose Connect server `make
integration` runs as a cluster): there the project is built over dbt-spark's `thrift` method
instead, against a Spark Thrift Server with a PostgreSQL metastore, killed the moment a MERGE
commits (scripts/with_thrift.py, as `make test-thrift-ci`). With the newest dbt-core and Spark,
dbt-spark's own functional tests run too (scripts/peer_suite.py; on dbt-core 1.12 nothing is
deselected).

`--ci` runs the four combinations that do more than build the project on the embedded session
(each Spark line and each dbt-core line at least once: over Connect, over `thrift`, dbt-spark's
tests); the newest dbt-core with the two older Spark lines, which only build the project, run
in the full matrix (`make matrix`), not in CI's sixty minutes.

Prints each combination's result and minutes; the table replaces the one in
docs/reference/dbt-compatibility.md. Each combination's output: build/matrix/<name>.log.

Usage: scripts/matrix.py [--ci | --only <name>...] [--lanes N] [--no-docs]
"""

import argparse
import datetime
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from uv import find_uv_bin

from dbt.adapters.spark_streams.session.jvm.cds import CDS_ENV
from dbt.adapters.spark_streams.session.jvm.jar_cache import cache_root
from dbt.adapters.spark_streams.versions import SparkVersion

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

    @property
    def name(self) -> str:
        return f"dbt-{self.dbt}+spark-{self.spark}"

    @property
    def constraints(self) -> list[Path]:
        return [REPO / "constraints" / f"dbt-{self.dbt}.txt",
                REPO / "constraints" / f"spark-{self.spark}.txt"]  # fmt: skip

    @property
    def connect(self) -> bool:
        # the newest Spark's Connect server is make integration's (a cluster, with faults)
        return self.dbt == DBT_LINES[0] and self.spark != SPARK_LINES[-1]

    @property
    def thrift(self) -> bool:
        # the oldest dbt-core with the newest Spark: the project over a Spark Thrift Server
        return (self.dbt, self.spark) == (DBT_LINES[0], SPARK_LINES[-1])

    @property
    def extras(self) -> str:
        return "dev,connect,thrift" if self.thrift else "dev,connect"

    @property
    def peer(self) -> bool:
        return (self.dbt, self.spark) == (DBT_LINES[-1], SPARK_LINES[-1])

    @property
    def ci(self) -> bool:
        # every Spark line and every dbt-core line, each over what only it runs
        return self.connect or self.thrift or self.peer


@dataclass
class Result:
    combination: Combination
    passed: bool
    minutes: float
    versions: str
    steps: str


def combinations() -> list[Combination]:
    return [Combination(dbt, spark) for dbt in DBT_LINES for spark in SPARK_LINES]


# Without class-data sharing: a combination's few JVM starts (three or four dbt processes,
# one over thrift) save less than a new archive's training costs, about 80 CPU-seconds for
# each combination's Spark on a machine that has none yet (each combination has its own).
COMBINATION_ENV = {**os.environ, CDS_ENV: "0"}


def run(command: list[str], log: IO[str], **kwargs: Any) -> bool:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    kwargs.setdefault("env", COMBINATION_ENV)
    done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False, **kwargs)
    return done.returncode == 0


# A combination's virtualenv that another setup.cfg or constraints replaced is removed once it
# is this old (a clone of an older commit may still be running in it).
STALE_AFTER = datetime.timedelta(days=1)


def stale_environments(venv: Path, now: float) -> list[Path]:
    """The virtualenvs of `venv`'s combination under other names (an older setup.cfg or
    constraints) made STALE_AFTER or longer before `now`. And after each run uv's cache is
    pruned (main): on one machine it grew to 67 GiB over a week of runs until the disk was
    full, and one fresh CI run left 8.6 GiB for prune to free."""
    name = venv.name.rsplit("-", 1)[0]
    return sorted(
        old
        for old in venv.parent.glob(f"{name}-*")
        if old != venv
        and old.name.rsplit("-", 1)[0] == name
        and now - old.stat().st_mtime >= STALE_AFTER.total_seconds()
    )


def environment(combination: Combination, log: IO[str]) -> Path | None:
    """The combination's virtualenv with this clone installed; None if it cannot be made."""
    key = hashlib.sha256()
    for source in [*combination.constraints, REPO / "setup.cfg"]:
        key.update(source.read_bytes())
    if combination.thrift:
        key.update(combination.extras.encode())
    venv = cache_root() / "venvs" / f"{combination.name}-{key.hexdigest()[:12]}"
    # uv, .venv's (make install): half of pip's minute for a new virtualenv. Like pip with
    # --no-compile, it leaves compiling a module to the run that imports it. The virtualenv
    # keeps its own pip, which dbt-spark's tests are downloaded with (scripts/peer_suite.py).
    uv = [find_uv_bin(), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python")]
    if not (venv / "ready").exists():
        shutil.rmtree(venv, ignore_errors=True)
        constraints = [arg for path in combination.constraints for arg in ("-c", str(path))]
        project = f"{REPO}[{combination.extras}]"
        if not (run([sys.executable, "-m", "venv", str(venv)], log)
                and run([*uv, *constraints, "-e", project], log)):  # fmt: skip
            return None
        (venv / "ready").touch()
        for stale in stale_environments(venv, time.time()):
            shutil.rmtree(stale, ignore_errors=True)
    elif not run([*uv, "--no-deps", "--reinstall-package", "dbt-spark-streams",
                  "-e", str(REPO)], log):  # fmt: skip
        return None
    warmed = run([str(venv / "bin" / "python"), "scripts/warm_start.py"], log, cwd=REPO)
    return venv if warmed else None


def check(combination: Combination) -> Result:
    """Build the combination's environment and run the project (and the peer suite) in it."""
    began = time.monotonic()
    with (WORK / f"{combination.name}.log").open("w") as log:
        venv = environment(combination, log)
        python = str(venv / "bin" / "python") if venv else ""
        shutil.rmtree(server_home(combination), ignore_errors=True)  # the last run's servers
        passed = bool(venv) and run(compat_command(combination, python), log, cwd=REPO)
        if passed and combination.peer:
            passed = run([python, "scripts/peer_suite.py"], log, cwd=REPO)
    return summary(combination, passed, (time.monotonic() - began) / 60)


def server_home(combination: Combination) -> Path:
    """Where a combination's Thrift Server and PostgreSQL keep their state."""
    return WORK / f"{combination.name}-server"


def compat_command(combination: Combination, python: str) -> list[str]:
    """The compatibility project's run in the combination (over thrift: beside a Spark Thrift
    Server and PostgreSQL that scripts/with_thrift.py starts, from the combination's PySpark)."""
    script = [python, "-u", "scripts/compat_run.py", str(WORK / combination.name)]
    if combination.thrift:
        server = str(server_home(combination))
        return [python, "scripts/with_thrift.py", server, "--", *script, "--thrift"]
    return [*script, *(["--connect"] if combination.connect else [])]


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
    if combination.thrift:
        steps.append("over `thrift` (a Spark Thrift Server, killed as a MERGE commits)")
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


def failure_excerpt(result: Result, lines: int = 16) -> str:
    """A failed combination's steps and what failed, from its log, for CI's output (which
    keeps only its tail): the step lines, FAILED, dbt's errors with the line after each."""
    text = (WORK / f"{result.combination.name}.log").read_text(errors="replace").splitlines()
    telling = re.compile(r"^(  dbt .*: exit |FAILED|\S*(Error|Exception)\b)|\b(ERROR|FAIL \d|"
                         r"Failure in|Error in)\b")  # fmt: skip
    picked: list[int] = []
    for number, line in enumerate(text):
        if telling.search(line):
            picked += [number, number + 1] if re.search(r"Error in|Failure in", line) else [number]
    shown = [text[number][:200] for number in sorted(set(picked)) if number < len(text)]
    where = WORK / f"{result.combination.name}.log"
    where = where.relative_to(REPO) if where.is_relative_to(REPO) else where
    return "\n".join([f"{result.combination.name} failed; from {where}:", *shown[-lines:]])


def write_page(results: list[Result]) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = f"{BEGIN}\n{table(results)}\n\n`make matrix`, {stamp}.\n{END}"
    page = PAGE.read_text()
    PAGE.write_text(re.sub(re.escape(BEGIN) + ".*" + re.escape(END), lambda _: block, page,
                           flags=re.DOTALL))  # fmt: skip


def lane_order(chosen: list[Combination]) -> list[Combination]:
    """The longest first (dbt-spark's tests, the Thrift Server's, then a Connect server's, the
    newer Spark's first: 4.5 against 4.2 minutes), so that the lanes end together."""
    return sorted(chosen, key=lambda c: (c.peer, c.thrift, c.connect, SparkVersion.parse(c.spark)),
                  reverse=True)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="combination names (dbt-1.12+spark-4.0 ...)")
    parser.add_argument("--ci", action="store_true", help="the combinations CI runs")
    parser.add_argument("--lanes", type=int, default=2)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    chosen = [c for c in combinations()
              if (not args.only or c.name in args.only) and (not args.ci or c.ci)]  # fmt: skip
    WORK.mkdir(parents=True, exist_ok=True)
    longest_first = lane_order(chosen)
    with ThreadPoolExecutor(args.lanes) as lanes:
        done = dict(zip(longest_first, lanes.map(check, longest_first), strict=True))
    # what no virtualenv uses, once no lane installs any more (stale_environments; seconds)
    subprocess.run([find_uv_bin(), "cache", "prune", "--quiet"], check=False)
    results = [done[combination] for combination in chosen]
    print(table(results))
    for result in results:
        if not result.passed:
            print(failure_excerpt(result))
    if not args.no_docs and not args.only and not args.ci:
        write_page(results)
    return 0 if all(result.passed for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
