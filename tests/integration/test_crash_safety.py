"""Builds SIGKILLed at each step of the commit protocol lose nothing and repeat nothing, and
two dbt processes building the same consumer at once never both consume.

Each crash round changes the sources and runs the seven stream models at once (`--threads
7`): the apply_changes mirror, the append-only audit, the insert-only stream of a file table,
the view stream's mirror, a materialized view aggregating an outer join and two apply_cdc
tables of change events, current state and every version (their tombstones, and the
history's kept events, written before the write; the history tracks no column, so a version
lasts from one delete to the next). The process dies once all seven builds have reached the
step (after pinning, during the write, after the commit but before the registry update; for
the file stream, during the write is after its new file set was written). The rounds follow
one another, each killed at the next step, so each killed run starts from the state the one
before it died in: the run killed during its write recovers from builds killed after their
pins, the run killed after its commits from writes killed halfway. A plain build then
recovers from commits whose offsets the registry never heard of, and its data tests assert
the invariants over all three rounds' changes: the mirror equals its source, the append-only
audit holds every order ever inserted exactly once, the events audit every row of every
landed file, the view stream's mirror equals its view, the materialized view its query, the
current-state table each key's newest event, and the history every event's version. A round
lost or consumed twice by any recovery fails them.

The concurrency rounds then take the same project further: a Derby network server opens the
metastore the crash rounds' processes used one at a time, so two dbt processes share it and
the warehouse. Each round one process changes the sources and both build; each must succeed
or fail with "is being consumed by another run", and a plain build afterwards must pass the
same invariants (which also checks that the last recovery left nothing to consume twice).
One flow for both spares a second project's first build. `make fuzz` runs three concurrency
rounds; `make integration` leaves them out (in CI, two processes build one consumer in
`make test-store`, on an object store with a PostgreSQL metastore).
"""

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbt.adapters.spark_streams.streams.builds.faults import BUILDS_ENV, CRASH_ENV, STEPS
from scripts.compat_run import wait_for_jvm_exit
from tests.integration.dbt_process import dbt_command, run_dbt_process
from tests.integration.ports import free_port

REPO = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).resolve().parent / "crash_project"
SERVER = REPO / "scripts" / "metastore-server.sh"
DRIVER = REPO / ".jars" / "derby-server" / "derbyclient-10.16.1.1.jar"
STREAM_MODELS = (
    "customers_mirror",
    "orders_audit",
    "events_audit",
    "paired_mirror",
    "tiers",
    "order_state",
    "order_history",
)
INVARIANTS = (
    "mirror_equals_source",
    "audit_has_each_order_once",
    "events_audit_has_each_event_once",
    "paired_mirror_is_view",
    "tiers_is_query",
    "order_state_is_newest_event",
    "order_history_is_every_version",
)
ROUNDS = int(os.environ.get("CONCURRENCY_ROUNDS", "1"))  # `make fuzz` runs more


def assert_invariants(
    build: subprocess.CompletedProcess[str], invariants: tuple[str, ...] = INVARIANTS
) -> None:
    assert build.returncode == 0, build.stdout + build.stderr
    for invariant in invariants:
        assert f"PASS {invariant}" in build.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crash") / "crash_project"
    shutil.copytree(PROJECT, root)
    first = run_dbt_process(root, "build", "--vars", "{round: 0}")
    assert first.returncode == 0, first.stdout + first.stderr
    # the profile's relative warehouse and metastore folders are the project's own
    assert (root / "spark-warehouse" / "crash.db").is_dir()
    assert (root / "metastore" / "metastore_db").is_dir()
    return root


def killed_at(project: Path, step: str, env: dict[str, str] | None = None) -> None:
    """The stream models built at once (a round of source changes first), the process
    SIGKILLed once every build has reached `step`."""
    crashed = run_dbt_process(
        project,
        "run",
        "--select",
        *STREAM_MODELS,
        "--threads",
        str(len(STREAM_MODELS)),
        "--vars",
        f"{{round: {STEPS.index(step) + 1}}}",
        env={**(env or {}), CRASH_ENV: step, BUILDS_ENV: str(len(STREAM_MODELS))},
    )
    assert crashed.returncode == -9, crashed.stdout + crashed.stderr


def test_builds_killed_at_each_step_then_recovery(project: Path) -> None:
    for step in STEPS:
        killed_at(project, step)
        wait_for_jvm_exit(project / "metastore")
    # the concurrency rounds consume after this recovery: a recovery that left a batch to
    # consume again fails their invariants
    assert_invariants(run_dbt_process(project, "build"))


@pytest.fixture
def shared_metastore(project: Path) -> Iterator[dict[str, str]]:
    """The crash rounds' metastore behind a Derby network server: the environment that
    points the project's profile at it."""
    home, port = project / "metastore", str(free_port())
    wait_for_jvm_exit(home)  # the last embedded process's Derby is closed
    subprocess.run(["bash", str(SERVER), "start", str(home), port], check=True, timeout=600)
    try:
        yield {
            "CRASH_METASTORE_URL": f"jdbc:derby://localhost:{port}/metastore_db;create=true",
            "CRASH_METASTORE_DRIVER_JAR": str(DRIVER),
            # The driver jar changes the JVM's class path, and with it the CDS archive's key: a
            # trainer for it would finish after these few processes (a minute of CPU for none).
            "SPARK_STREAMS_CDS": "0",
        }
    finally:
        subprocess.run(["bash", str(SERVER), "stop", str(home), port], check=False)


def test_two_builds_of_one_consumer_at_once(project: Path, shared_metastore: dict) -> None:
    env = shared_metastore
    first_round = len(STEPS) + 1  # after the crash rounds' changes
    for round_ in range(first_round, first_round + ROUNDS):
        both = [
            dbt_command(project, "run", "--vars", f"{{round: {round_}}}", name="a", env=env),
            dbt_command(project, "run", name="b", env=env),
        ]
        processes = [subprocess.Popen(**command) for command in both]
        outputs = [process.communicate(timeout=900)[0] for process in processes]
        for process, output in zip(processes, outputs, strict=True):
            lost = "is being consumed by another run" in output
            assert process.returncode == 0 or lost, output
            print(f"round {round_}: rc={process.returncode} lost={lost}")
        assert_invariants(run_dbt_process(project, "build", env=env))
