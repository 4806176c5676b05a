"""A build SIGKILLed at each step of the commit protocol loses nothing and repeats nothing.

Each round changes the sources and runs a build that kills its own process at one step (after
pinning, during the write, after the commit but before the registry update), then a build of
the insert-only stream of a file table and one of a view stream, each killed at the same step
(for the file stream, during the write is after its new file set was written). A plain build
then recovers, and its data tests assert the invariants: the mirror equals its source, the
append-only audit holds every order ever inserted exactly once, the events audit every row of
every landed file, and the view stream's mirror equals its view.
"""

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from dbt.adapters.spark_streams.streams.faults import CRASH_ENV, STEPS
from tests.integration.dbt_process import run_dbt_process

PROJECT = Path(__file__).resolve().parent / "crash_project"
INVARIANTS = (
    "mirror_equals_source",
    "audit_has_each_order_once",
    "events_audit_has_each_event_once",
    "paired_mirror_is_view",
)


def wait_for_jvm_exit(metastore: Path, timeout: float = 120) -> None:
    """The killed driver's JVM notices its Python is gone and exits, freeing embedded Derby."""
    marker = f"derby.system.home={metastore}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = subprocess.run(["pgrep", "-f", marker], capture_output=True, check=False)
        if alive.returncode != 0:
            return
        time.sleep(1)
    raise AssertionError(f"the killed build's JVM ({marker}) is still running")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crash") / "crash_project"
    shutil.copytree(PROJECT, root)
    first = run_dbt_process(root, "build", "--vars", "{round: 0}")
    assert first.returncode == 0, first.stdout + first.stderr
    return root


@pytest.mark.parametrize("step", STEPS)
def test_killed_build_then_recovery(project: Path, step: str) -> None:
    round_ = STEPS.index(step) + 1
    crashed = run_dbt_process(
        project,
        "run",
        "--select",
        "customers_mirror",
        "orders_audit",
        "--vars",
        f"{{round: {round_}}}",
        env={CRASH_ENV: step},
    )
    assert crashed.returncode == -9, crashed.stdout + crashed.stderr
    wait_for_jvm_exit(project / "metastore")
    # the round's changes are pending for the other streams too: the builds of the file
    # stream and of the view stream die at the same step
    for model in ("events_audit", "paired_mirror"):
        crashed = run_dbt_process(project, "run", "--select", model, env={CRASH_ENV: step})
        assert crashed.returncode == -9, crashed.stdout + crashed.stderr
        wait_for_jvm_exit(project / "metastore")

    recovered = run_dbt_process(project, "build")
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    for invariant in INVARIANTS:
        assert f"PASS {invariant}" in recovered.stdout

    if step == STEPS[-1]:  # earlier steps get this check from the next step's recovery
        again = run_dbt_process(project, "build")
        assert again.returncode == 0, again.stdout + again.stderr
        assert "PASS audit_has_each_order_once" in again.stdout
        assert "PASS events_audit_has_each_event_once" in again.stdout
