"""`make soak`: random changes and builds at the scale users run, for as long as asked.

The crash project's stream models (an `apply_changes` mirror of a standard stream, an `append`
audit of an append_only stream, an insert-only stream of a Parquet table, a mirror of a view
stream over a join, a materialized view and two `apply_cdc` models of change events, current
state and every version), with a `merge` and a `history` model of the customers added, are
built with `--threads 4`, each build a separate dbt process, between batches of random changes
to their sources: inserts, updates, updates to the same values, deletes, re-keys, MERGEs,
overwrites and added columns of the customers; new and updated orders; new event files; change
events of orders (upserts and deletes, late ones, ones delivered twice). Some builds are made
to fail (a pre-hook error) and some are killed at a step of the commit protocol; the build
after them must recover. After every build that should succeed, its data tests compare every
target with an independent recomputation from the sources (the mirror equals its source, the
audit holds every order once, the events audit every landed row once, the view mirror equals
the view, the materialized view its query, the merge target holds every source row once, the
history's open rows equal the source, the current-state table each key's newest event and the
versions table a version from each delete to the next, with its newest event's amount):
anything lost or duplicated fails them.

    python -m tests.soak.soak --seed 7 --steps 2000

A failure prints the seed and what failed, then replays ever shorter histories from an empty
warehouse for up to --shrink-minutes (tests/soak/shrink.py) and prints and saves the shortest
one that still fails the same way; --replay plays a saved history again.
"""

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dbt.adapters.spark_streams.streams.builds.faults import CRASH_ENV, STEPS
from tests.integration.dbt_process import run_dbt_process
from tests.integration.test_crash_safety import wait_for_jvm_exit
from tests.soak.project import CHECKS, prepare
from tests.soak.shrink import Batch, History, shrink, statement_count

CUSTOMERS = "crash_raw.customers"
# Random statements per batch: a nightly run consumes many commits, and fewer, larger batches
# keep 2,000 steps to about an hour (a build costs about a minute, a statement about a second).
BATCH = (40, 120)
# Columns the soak adds to the customers (the mirror keeps its three; the stream reads on).
MAX_ADDED_COLUMNS = 8


@dataclass
class Soak:
    """What the random changes know of the sources, and the tallies the summary prints."""

    seed: int
    rng: random.Random = field(init=False)
    customers: set[int] = field(default_factory=lambda: set(range(1, 21)))
    orders: set[int] = field(default_factory=lambda: set(range(1, 31)))
    events: int = 10
    # the change events of the apply_cdc models (crash_raw.order_events): each (key, sequence)
    # drawn once, some late, some deletes, some delivered twice
    order_events: list[tuple[int, int, str, int]] = field(default_factory=list)
    sequence: int = 2_000
    added_columns: list[str] = field(default_factory=list)
    next_id: int = 10_000
    history: History = ()
    steps: int = 0
    builds: int = 0
    failed: int = 0
    killed: int = 0
    checks: int = 0
    rows_compared: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def fresh(self) -> int:
        self.next_id += 1
        return self.next_id

    def statement(self) -> str:
        """One random change to the sources (orders keep their ids: the audit counts them)."""
        kind = self.rng.choice(
            [
                "insert",
                "update",
                "noop",
                "delete",
                "rekey",
                "merge",
                "overwrite",
                "order",
                "order_update",
                "event",
                "order_event",
                "add_column",
                "evolving_merge",
                "set_added",
            ]
        )
        key = self.rng.choice(sorted(self.customers)) if self.customers else None
        if kind == "insert" or key is None:
            new = self.fresh()
            self.customers.add(new)
            return f"insert into {CUSTOMERS} values ({new}, 'n{new}', 'basic'{self.nulls()})"
        if kind == "add_column" and len(self.added_columns) < MAX_ADDED_COLUMNS:
            self.added_columns.append(f"added{len(self.added_columns) + 1}")
            return f"alter table {CUSTOMERS} add columns ({self.added_columns[-1]} string)"
        if kind == "evolving_merge" and len(self.added_columns) < MAX_ADDED_COLUMNS:
            return self.evolving_merge(key)
        if kind == "set_added" and self.added_columns:
            column = self.rng.choice(self.added_columns)
            return (
                f"update {CUSTOMERS} set {column} = 'v{self.rng.randint(1, 9)}' where id = {key}"
            )
        if kind == "update":
            return f"update {CUSTOMERS} set tier = 'tier{self.rng.randint(1, 9)}' where id = {key}"
        if kind == "noop":
            return f"update {CUSTOMERS} set tier = tier where id = {key}"
        if kind == "delete" and len(self.customers) > 5:
            self.customers.discard(key)
            return f"delete from {CUSTOMERS} where id = {key}"
        if kind == "rekey":
            new = self.fresh()
            self.customers.discard(key)
            self.customers.add(new)
            return f"update {CUSTOMERS} set id = {new} where id = {key}"
        if kind == "merge":
            new = self.fresh()
            self.customers.add(new)
            return (
                f"merge into {CUSTOMERS} t using (select {key} as id, 'm' as name, 'gold' as tier "
                f"union all select {new}, 'm{new}', 'basic') s on t.id = s.id "
                "when matched then update set tier = s.tier "
                "when not matched then insert (id, name, tier) values (s.id, s.name, s.tier)"
            )
        if kind == "overwrite":
            self.customers = {k for k in self.customers if k % 7 != 3} or self.customers
            return (
                f"insert overwrite {CUSTOMERS} select id, name, concat(tier, '+')"
                f"{''.join(', ' + column for column in self.added_columns)} "
                f"from {CUSTOMERS} where id % 7 <> 3"
            )
        if kind == "order":
            order = self.fresh()
            self.orders.add(order)
            return f"insert into crash_raw.orders values ({order}, {self.rng.randint(1, 99)})"
        if kind == "order_update":
            return f"update crash_raw.orders set amount = amount + 1 where id = {key}"
        if kind == "order_event":
            return self.order_event()
        self.events += 1
        return f"insert into crash_raw.events values ({self.fresh()}, 'soak')"

    def order_event(self) -> str:
        """A change event of an order's state: an upsert or a delete of one of ten keys, one in
        five late (sequenced before events already landed), one in ten a copy of an event that
        landed before (delivered twice)."""
        if self.order_events and self.rng.random() < 0.1:
            event = self.rng.choice(self.order_events)
        else:
            self.sequence += 10
            late = self.rng.random() < 0.2
            key = self.rng.randrange(10)
            sequence = (
                self.sequence - self.rng.randrange(1, 300) * 10 - key
                if late
                else (self.sequence + key)
            )
            if any(e[0] == key and e[3] == sequence for e in self.order_events):
                sequence = self.sequence + key  # that one landed: on time instead
            op = "D" if self.rng.random() < 0.25 else "U"
            event = (key, self.rng.randint(1, 999), op, sequence)
            self.order_events.append(event)
        key, amount, op, sequence = event
        return f"insert into crash_raw.order_events values ({key}, {amount}, '{op}', {sequence})"

    def evolving_merge(self, key: int) -> str:
        """A MERGE whose source has a column the customers lack: schema auto-merge (on for the
        batch's statements, see random_batch) adds it, with no trace in the history."""
        new = self.fresh()
        self.customers.add(new)
        self.added_columns.append(f"added{len(self.added_columns) + 1}")
        columns = (
            "".join(f", cast(null as string) as {c}" for c in self.added_columns[:-1])
            + f", 'e{new}' as {self.added_columns[-1]}"
        )
        return (
            f"merge into {CUSTOMERS} t using (select {key} as id, 'e' as name, 'gold' as tier"
            f"{columns} union all select {new}, 'e{new}', 'basic'{columns}) s on t.id = s.id "
            "when matched then update set * when not matched then insert *"
        )

    def nulls(self) -> str:
        """Values for the columns added so far, in an INSERT ... VALUES."""
        return ", null" * len(self.added_columns)

    def target_rows(self) -> int:
        """The rows the invariant tests compare after a build: the mirror and its source, the
        audit and the orders, the events audit, the view mirror and the view, and the merge
        target's and the history's open rows with the source."""
        paired = len(self.orders & self.customers)
        return 6 * len(self.customers) + 2 * len(self.orders) + self.events + 2 * paired


# A build applies up to 120 statements before it builds: give it half an hour (a busy machine
# took more than the 10 minutes the tests allow a dbt process).
DBT_TIMEOUT_S = 1800


def dbt(
    project: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    try:
        return run_dbt_process(project, *args, env=env, timeout=DBT_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        output = exc.stdout.decode() if isinstance(exc.stdout, bytes) else str(exc.stdout or "")
        return subprocess.CompletedProcess(exc.cmd, -1, output[-6000:] + "\n(timed out)", "")


def with_statements(statements: tuple[str, ...]) -> tuple[str, ...]:
    """dbt arguments that make the build's on-run-start hook apply `statements` first."""
    return ("--vars", str({"statements": list(statements)})) if statements else ()


@dataclass(frozen=True)
class Failure:
    """A build that did not do what the soak asked: `what` names the failed checks and models
    (or the soak's own complaint) without their values, so a replay can be matched to it."""

    batch: int
    what: str
    output: str


def failure(batch: int, complaint: str, output: str) -> Failure:
    named = sorted(set(re.findall(r"(?:Failure|Error) in (?:test|model|operation) (\w+)", output)))
    timed_out = ["timed out"] if output.endswith("(timed out)") else []
    return Failure(batch, ", ".join([complaint, *named, *timed_out]), output[-6000:])


def checked_build(
    project: Path, soak: Soak, batch: int, statements: tuple[str, ...]
) -> Failure | None:
    """A build (applying `statements` first) that must succeed and pass every invariant."""
    built = dbt(project, "build", *with_statements(statements))
    soak.builds += 1
    missing = [name for name in CHECKS if f"PASS {name}" not in built.stdout]
    if built.returncode != 0 or missing:
        return failure(batch, "a build failed or a check did not pass", built.stdout)
    soak.checks += len(CHECKS)
    soak.rows_compared += soak.target_rows()
    return None


def play(project: Path, soak: Soak, number: int, batch: Batch) -> Failure | None:
    """One batch: its statements applied by a build that passes every check, or by a build made
    to fail or killed at a step of the commit protocol and then a checked build that recovers."""
    statements = batch.statements
    if batch.outcome == "fail":
        broken = dbt(project, "run", "--vars", str({"fail": True, "statements": list(statements)}))
        soak.builds += 1
        soak.failed += 1
        if broken.returncode == 0 or "injected_failure_no_such_table" not in broken.stdout:
            return failure(number, "the build made to fail did not fail as asked", broken.stdout)
        statements = ()
    elif batch.outcome != "build":
        killed = dbt(project, "run", *with_statements(statements), env={CRASH_ENV: batch.outcome})
        soak.builds += 1
        soak.killed += 1
        if killed.returncode != -9:
            return failure(
                number, f"the build asked to die at {batch.outcome} did not", killed.stdout
            )
        wait_for_jvm_exit(project / "metastore")
        statements = ()
    return checked_build(project, soak, number, statements)


def start(root: Path) -> tuple[Path, Failure | None]:
    """A fresh copy of the project under `root`, built once."""
    project = prepare(root)
    first = dbt(project, "build", "--vars", "{round: 0}")
    return project, None if first.returncode == 0 else failure(
        0, "the first build failed", first.stdout
    )


def replay(history: History, root: Path) -> Failure | None:
    """`history` played again from an empty warehouse: its first failure, if any."""
    with tempfile.TemporaryDirectory(dir=root) as trial:
        soak = Soak(seed=0)
        project, failed = start(Path(trial))
        for number, batch in enumerate(history, start=1):
            failed = failed or play(project, soak, number, batch)
        return failed


# Applied before each batch's statements, on their session only: a MERGE with `set *` whose
# source has a new column evolves the schema (the soak's other MERGEs name their columns).
AUTO_MERGE = "set spark.databricks.delta.schema.autoMerge.enabled = true"


def random_batch(soak: Soak) -> Batch:
    drawn = (soak.statement() for _ in range(soak.rng.randint(*BATCH)))
    statements = (AUTO_MERGE, *drawn)
    outcome = soak.rng.random()
    if outcome < 0.15:
        return Batch(statements, "fail")
    if outcome < 0.30:
        return Batch(statements, soak.rng.choice(STEPS))
    return Batch(statements)


def run(soak: Soak, steps: int, root: Path) -> Failure | None:
    project, failed = start(root)
    started = time.monotonic()
    while soak.steps < steps and not failed:
        batch = random_batch(soak)
        soak.history += (batch,)
        soak.steps += len(batch.statements)
        failed = play(project, soak, len(soak.history), batch)
        minutes = (time.monotonic() - started) / 60
        print(f"batch {len(soak.history)}: {soak.steps} steps, {soak.builds} builds "
              f"({soak.failed} failed, {soak.killed} killed), {soak.rows_compared} rows "
              f"compared, {minutes:.1f} min", flush=True)  # fmt: skip
    return failed


def report(soak: Soak, failed: Failure, root: Path, shrink_minutes: float) -> None:
    """Print the failure, then shrink its history and print and save the shortest one found."""
    print(failed.output)
    print(f"\nSOAK FAILED at batch {failed.batch} (seed {soak.seed}): {failed.what}", flush=True)
    history = soak.history[: failed.batch]
    if shrink_minutes > 0 and history:  # a failed first build has no history to shrink
        print(
            f"Shrinking its {len(history)} batches for up to {shrink_minutes:g} minutes ...",
            flush=True,
        )

        def fails_the_same_way(candidate: History) -> bool:
            again = replay(candidate, root)
            return again is not None and again.what == failed.what

        history = shrink(history, fails_the_same_way, shrink_minutes)
    saved = Path(f"soak-failure-{soak.seed}.json").resolve()
    saved.write_text(json.dumps([asdict(batch) for batch in history], indent=1))
    print(f"\nThe shortest history found ({len(history)} batches, {statement_count(history)} "
          f"statements), saved to {saved}; replay it with --replay {saved}:")  # fmt: skip
    for number, batch in enumerate(history, start=1):
        print(f"-- batch {number}: {batch.outcome}")
        print("\n".join(f"{statement};" for statement in batch.statements))


def load(path: Path) -> History:
    return tuple(Batch(tuple(b["statements"]), b["outcome"]) for b in json.loads(path.read_text()))


def replay_saved(path: Path) -> int:
    """--replay: a saved history played again from an empty warehouse; 1 if it still fails."""
    history = load(path)
    with tempfile.TemporaryDirectory(prefix="soak-") as root:
        failed = replay(history, Path(root))
    if failed:
        print(failed.output)
        print(f"\nREPLAY FAILED at batch {failed.batch} of {path}: {failed.what}")
        return 1
    print(f"\nReplay passed: {len(history)} batches, {statement_count(history)} statements.")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randrange(10**6))
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--shrink-minutes", type=float, default=60)
    parser.add_argument("--replay", type=Path, help="a history a failed soak saved")
    options = parser.parse_args()
    if options.replay:
        sys.exit(replay_saved(options.replay))
    started = time.monotonic()
    soak = Soak(options.seed)
    with tempfile.TemporaryDirectory(prefix="soak-") as root:
        failed = run(soak, options.steps, Path(root))
        if failed:
            report(soak, failed, Path(root), options.shrink_minutes)
            sys.exit(1)
    minutes = (time.monotonic() - started) / 60
    print(
        f"\nSoak passed: seed {options.seed}, {soak.steps} random steps, {soak.builds} builds "
        f"({soak.failed} made to fail, {soak.killed} killed), {soak.checks} invariant checks "
        f"comparing {soak.rows_compared} rows, 0 rows lost or duplicated, {minutes:.0f} minutes."
    )


if __name__ == "__main__":
    main()
