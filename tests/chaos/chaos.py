"""`make chaos`: faults of a real cluster, injected in the middle of builds, with nothing lost.

A cluster of separate processes (scripts/cluster.py: master, two workers, a Spark Connect
server with a token, a Derby network metastore, the warehouse on a small tmpfs) runs the
soak's project (six stream models: a mirror, an append-only audit, an insert-only file
stream, a view stream's mirror, a merge and a history target) over Spark Connect with
`--threads 4`. Each cycle applies a batch of the soak's random changes, starts `dbt run`, and
injects faults of one kind at random points inside its builds: a worker killed (and started
again), the Connect server killed and restarted, the dbt process SIGKILLed while the server
runs its statement, the metastore's server killed and restarted, the warehouse filled until a
write fails (then freed). A run that had a build fail is followed, once the cluster is
repaired, by a plain `dbt run` that must succeed; then every target is compared with its
source (rows lost, rows doubled) and every registry offset with the one its target committed
(tests/chaos/checks.py). Every failure message the faulted runs print must be a sentence,
not a stack.

    python -m tests.chaos.chaos --seed 7 --injections 200 --minutes 85
    python -m tests.chaos.chaos --replay chaos-failure-7.json

A failing run prints its seed and saves its sequence of cycles (the statements and the planned
faults) for --replay. Faults land at points in time, so a replay repeats the sequence, not
the exact instants.
"""

import argparse
import contextlib
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pyspark.sql.connect.session import SparkSession as ConnectSession

from scripts import cluster
from tests.chaos import stores
from tests.chaos.checks import RunSql, Verdict, check
from tests.chaos.faults import KINDS, STORE_KINDS, Injection, inject, repair, wait_gone
from tests.integration.dbt_process import dbt_command, run_dbt_process
from tests.soak.soak import AUTO_MERGE, Soak, prepare

PROFILE = """crash:
  target: dev
  outputs:
    dev:
      type: spark_streams
      method: connect
      host: {host}
      token: "{{{{ env_var('SPARK_CONNECT_TOKEN') }}}}"
      connect_timeout: 5
      connect_retries: 1
      schema: crash
      threads: 4
"""
STREAM_START = "START sql stream_incremental model"
STREAM_OK = "OK created sql stream_incremental model"
STREAM_ERROR = "ERROR creating sql stream_incremental model"
# What a clear failure message never shows: Python's or the JVM's internals, and (every
# table exists here) a fault blamed on a stream's source.
UNCLEAR = ("Traceback (most recent call last)", "JVM stacktrace", "_InactiveRpcError",
           "grpc._channel", "\tat org.apache", "RETRIES_EXCEEDED", "NO_ACTIVE_SESSION",
           "Check that the table exists")  # fmt: skip
WAREHOUSE_MIB = 768
RUN_TIMEOUT_S = 900
# A recovery run may meet the statement a killed client left running on the server (it
# commits, or loses to the recovery's write): that run says so, and the next one consumes.
RECOVERY_ATTEMPTS = 3
# How many faults of a kind a run goes on through (worker, metastore, disk) it gets: as many
# as fit in its builds, each a few seconds after the one before was repaired.
REPEATED = (4, 10)


@dataclass(frozen=True)
class Cycle:
    statements: tuple[str, ...]
    injections: tuple[Injection, ...]


@dataclass
class Tally:
    """One fault kind's figures: the faults injected, the runs they hit, those runs' stream
    model builds that failed and that succeeded anyway, the recovery runs needed after them
    (a run that succeeded through its faults needs none), the rows checked after each and the
    rows found lost or doubled."""

    injections: int = 0
    runs: int = 0
    failed: int = 0
    succeeded: int = 0
    recoveries: int = 0
    rows_checked: int = 0
    lost: int = 0
    doubled: int = 0
    messages: Counter = field(default_factory=Counter)


@dataclass
class Chaos:
    seed: int
    home: Path
    project: Path
    soak: Soak
    tallies: dict[str, Tally] = field(default_factory=dict)
    cycles: list[Cycle] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    _last: float = field(default_factory=time.monotonic)

    def clock(self, phase: str) -> None:
        """Add the time since the last call to `phase` (where a run's minutes go)."""
        now = time.monotonic()
        self.seconds[phase] += now - self._last
        self._last = now

    @property
    def injections(self) -> int:
        return sum(tally.injections for tally in self.tallies.values())


def plan(soak: Soak, kinds: tuple[str, ...] = KINDS) -> Cycle:
    """A random batch of the soak's changes and faults of one kind for the run after it (so
    that what the run's builds say is that kind's): the first once one of the run's first
    stream builds has started, each next one a moment after the one before was repaired. A
    killed client ends the run, and a killed server ends what is left of it; a run goes on
    through the other kinds, so it gets several."""
    rng = soak.rng
    statements = (AUTO_MERGE, *(soak.statement() for _ in range(rng.randint(2, 8))))
    kind = rng.choice(kinds)
    times = {"client": 1, "server": rng.randint(1, 2), "stall": rng.randint(1, 3)}.get(
        kind, rng.randint(*REPEATED)
    )
    holds = {"server": (0.5, 2.0), "stall": stores.STALL_S}
    injections = tuple(
        Injection(
            kind,
            after_starts=rng.randint(1, 3) if number == 0 else 0,
            delay=rng.uniform(0, 2),
            hold=rng.uniform(*holds.get(kind, (1.0, 4.0))),
            worker=rng.randrange(2),
        )
        for number in range(times)
    )
    return Cycle(statements, injections)


@contextlib.contextmanager
def connect(home: Path) -> Iterator[ConnectSession]:
    """A session of the harness's own (a new one each time: the server may have restarted)."""
    keys = cluster.profile_keys(home, json.loads((home / cluster.STATE).read_text()))
    session = ConnectSession.builder.remote(f"{keys['host']}/;token={keys['token']}").create()
    try:
        yield session
    finally:
        session.stop()


def run_sql(session: ConnectSession) -> RunSql:
    return lambda statement: [row.asDict() for row in session.sql(statement).collect()]


def token(home: Path) -> dict[str, str]:
    return {"SPARK_CONNECT_TOKEN": (home / "token").read_text()}


def faulted_run(chaos: Chaos, cycle: Cycle) -> tuple[str, list[Injection], bool]:
    """`dbt run` with the cycle's faults injected while its builds run; each fault is repaired
    after its hold. Returns the run's output, the faults actually injected (a run that ended
    before a fault's moment gets none) and whether the run succeeded all the same."""
    command = dbt_command(chaos.project, "run", env=token(chaos.home))
    dbt = subprocess.Popen(**command, start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(dbt.stdout or ()), daemon=True)
    reader.start()
    injected = []
    for injection in cycle.injections:
        while (
            dbt.poll() is None
            and sum(STREAM_START in line for line in lines) < injection.after_starts
        ):
            time.sleep(0.05)
        time.sleep(injection.delay)
        if dbt.poll() is not None:
            break
        inject(chaos.home, injection, dbt)
        injected.append(injection)
        time.sleep(injection.hold)
        repair(chaos.home, injection)
    wait_gone(dbt, RUN_TIMEOUT_S)
    reader.join(60)
    return "".join(lines), injected, dbt.returncode == 0


def error_messages(output: str) -> list[str]:
    """The first line of each model error dbt printed (past dbt's "Runtime Error" and
    "Database Error" headings), numbers blurred, so that one kind of message counts once."""
    found = re.findall(r"Error in model \S+ \([^)]*\)\n(?:\s*\w+ Error\n)*\s*(.+)", output)
    return [re.sub(r"\d+", "N", message.strip())[:240] for message in found]


def recover(chaos: Chaos) -> str | None:
    """Plain runs until one succeeds (a run that met a left-over statement of a killed client
    says the stream is being consumed by another run, and the next one consumes): None, or
    what went wrong."""
    for _ in range(RECOVERY_ATTEMPTS):
        done = run_dbt_process(chaos.project, "run", env=token(chaos.home), timeout=RUN_TIMEOUT_S)
        if done.returncode == 0:
            return None
        if "is being consumed by another run" not in done.stdout:
            return f"the recovery run failed:\n{done.stdout[-5000:]}"
        time.sleep(5)
    return f"{RECOVERY_ATTEMPTS} recovery runs in a row lost their streams to another run"


def play(chaos: Chaos, cycle: Cycle) -> str | None:
    """One cycle: changes, the faulted run, the recovery, the checks. None, or the failure."""
    with connect(chaos.home) as session:
        for statement in cycle.statements:
            session.sql(statement).collect()
    chaos.clock("changes")
    output, injected, survived = faulted_run(chaos, cycle)
    chaos.clock("faulted run")
    unclear = [marker for marker in UNCLEAR if marker in output]
    if unclear:
        return f"the faulted run printed {unclear} instead of a sentence:\n{output[-5000:]}"
    failed, succeeded = output.count(STREAM_ERROR), output.count(STREAM_OK)
    messages = error_messages(output)
    # A run that succeeded through its faults is checked as it is: no recovery to run.
    trouble = None if survived else recover(chaos)
    chaos.clock("recovery")
    if trouble:
        return trouble
    with connect(chaos.home) as session:
        verdict = check(run_sql(session))
    chaos.clock("check")
    for kind in {injection.kind for injection in injected}:
        tally = chaos.tallies.setdefault(kind, Tally())
        count(tally, injected, kind, (failed, succeeded, not survived), messages, verdict)
    if not verdict.passed:
        return "after the recovery: " + "; ".join(verdict.wrong)
    return None


def count(tally: Tally, injected: list[Injection], kind: str, builds: tuple[int, int, bool],
          messages: list[str], verdict: Verdict) -> None:  # fmt: skip
    """Add a checked run's figures: `builds` is (failed, succeeded, recovery run needed)."""
    failed, succeeded, recovered = builds
    tally.injections += sum(injection.kind == kind for injection in injected)
    tally.runs += 1
    tally.failed += failed
    tally.succeeded += succeeded
    tally.recoveries += recovered
    tally.rows_checked += verdict.compared
    tally.lost += verdict.lost
    tally.doubled += verdict.doubled
    tally.messages.update(messages)


def start(root: Path, seed: int, kinds: tuple[str, ...], on_stores: bool) -> Chaos:
    """The cluster in <root>/cluster (its warehouse on a tmpfs, or `on_stores` on an object
    store with a PostgreSQL metastore), and the soak's project built once over it."""
    home = root / "cluster"
    if on_stores:
        keys = cluster.start(home, stores.S3A_CONFS, stores=stores.start(home))
    else:
        keys = cluster.start(home, warehouse_mib=WAREHOUSE_MIB)
    project = prepare(root)
    (project / "profiles.yml").write_text(PROFILE.format(host=keys["host"]))
    first = run_dbt_process(
        project, "build", "--vars", "{round: 0}", env=token(home), timeout=1800
    )
    if first.returncode != 0:
        raise RuntimeError(f"the first build failed:\n{first.stdout[-5000:]}")
    return Chaos(seed, home, project, Soak(seed), {kind: Tally() for kind in kinds})


def run(chaos: Chaos, cycles: list[Cycle] | None, injections: int, minutes: float,
        kinds: tuple[str, ...] = KINDS) -> str | None:  # fmt: skip
    started = time.monotonic()
    while True:
        elapsed = (time.monotonic() - started) / 60
        if cycles is None and (chaos.injections >= injections or elapsed >= minutes):
            return None
        if cycles is not None and len(chaos.cycles) == len(cycles):
            return None
        cycle = plan(chaos.soak, kinds) if cycles is None else cycles[len(chaos.cycles)]
        chaos.cycles.append(cycle)
        failed = play(chaos, cycle)
        what = ", ".join(injection.kind for injection in cycle.injections)
        print(f"cycle {len(chaos.cycles)} ({what}): {chaos.injections} faults injected, "
              f"{elapsed:.1f} min", flush=True)  # fmt: skip
        if failed:
            return failed


def figures(chaos: Chaos, minutes: float) -> str:
    """The per-kind table `make chaos` prints (and the README reports), and the messages."""
    lines = [
        f"Chaos run, seed {chaos.seed}: {len(chaos.cycles)} cycles, {chaos.injections} faults "
        f"injected in {minutes:.0f} minutes.",
        "",
        "| fault | injected | runs | builds failed | builds succeeded anyway | recovery runs "
        "| rows checked | rows lost | rows doubled |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for kind, tally in chaos.tallies.items():
        lines.append(
            f"| {kind} | {tally.injections} | {tally.runs} | {tally.failed} | {tally.succeeded} "
            f"| {tally.recoveries} | {tally.rows_checked:,} | {tally.lost} | {tally.doubled} |"
        )
    spent = ", ".join(f"{phase} {seconds / 60:.1f}" for phase, seconds in chaos.seconds.items())
    lines += ["", f"Minutes by phase: {spent}.", "", "What the failed builds said (count, "
              "first line, numbers as N):", ""]  # fmt: skip
    for kind, tally in chaos.tallies.items():
        for message, times in tally.messages.most_common():
            lines.append(f"- {kind}, {times}x: {message}")
    return "\n".join(lines)


def save(chaos: Chaos) -> Path:
    saved = Path(f"chaos-failure-{chaos.seed}.json").resolve()
    body = [{"statements": c.statements, "injections": [asdict(i) for i in c.injections]}
            for c in chaos.cycles]  # fmt: skip
    saved.write_text(json.dumps(body, indent=1))
    return saved


def load(path: Path) -> list[Cycle]:
    return [
        Cycle(tuple(c["statements"]), tuple(Injection(**i) for i in c["injections"]))
        for c in json.loads(path.read_text())
    ]


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randrange(10**6))
    parser.add_argument("--injections", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=85)
    parser.add_argument(
        "--stores",
        action="store_true",
        help="tables on an object store, the metastore in PostgreSQL, and their faults",
    )
    parser.add_argument(
        "--kinds",
        help=f"the faults to inject, comma-separated (of {', '.join(KINDS)}; with --stores, "
        f"of {', '.join(STORE_KINDS)}); by default all of them",
    )
    parser.add_argument("--replay", type=Path, help="a sequence a failed chaos run saved")
    parser.add_argument("--out", type=Path, default=Path("chaos-results.md"))
    chosen = parser.parse_args()
    allowed = STORE_KINDS if chosen.stores else KINDS
    chosen.kinds = tuple(chosen.kinds.split(",")) if chosen.kinds is not None else allowed
    if set(chosen.kinds) - set(allowed):  # an empty --kinds splits to ("",), not a kind
        sys.exit(f"--kinds takes some of {', '.join(allowed)}, comma-separated")
    if "disk" in chosen.kinds and shutil.which("mount") is None:
        sys.exit("make chaos mounts a tmpfs for the warehouse: it needs mount(8) and root")
    return chosen


def main() -> None:
    chosen = options()
    cycles = load(chosen.replay) if chosen.replay else None
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="chaos-") as root:
        home = Path(root) / "cluster"
        try:
            chaos = start(Path(root), chosen.seed, chosen.kinds, chosen.stores)
            try:
                failed = run(chaos, cycles, chosen.injections, chosen.minutes, chosen.kinds)
            except KeyboardInterrupt:  # a hung run stopped by hand: its figures so far
                failed = "interrupted (a run that hangs is a failure too)"
        finally:
            cluster.stop(home)
            if chosen.stores:
                stores.stop(home)
    report = figures(chaos, (time.monotonic() - began) / 60)
    print("\n" + report)
    if failed:
        print(f"\nCHAOS FAILED in cycle {len(chaos.cycles)} (seed {chaos.seed}): {failed}")
        print(f"The sequence is saved to {save(chaos)}; replay it with --replay <that file>.")
        sys.exit(1)
    chosen.out.write_text(report + "\n")
    print(f"\nChaos passed: 0 rows lost, 0 doubled; figures in {chosen.out}.")


if __name__ == "__main__":
    main()
