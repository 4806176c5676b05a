"""Builds SIGKILLed at each step of the commit protocol lose nothing and repeat nothing.

Each round changes the sources and runs the four stream models at once (`--threads 4`): the
apply_changes mirror, the append-only audit, the insert-only stream of a file table and the
view stream's mirror. The process dies once all four builds have reached the step (after
pinning, during the write, after the commit but before the registry update; for the file
stream, during the write is after its new file set was written). A plain build then
recovers, and its data tests assert the invariants: the mirror equals its source, the
append-only audit holds every order ever inserted exactly once, the events audit every row of
every landed file, and the view stream's mirror equals its view.
"""

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from dbt.adapters.spark_streams.streams.faults import BUILDS_ENV, CRASH_ENV, STEPS
from tests.integration.dbt_process import run_dbt_process

PROJECT = Path(__file__).resolve().parent / "crash_project"
STREAM_MODELS = ("customers_mirror", "orders_audit", "events_audit", "paired_mirror")
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
        *STREAM_MODELS,
        "--threads",
        str(len(STREAM_MODELS)),
        "--vars",
        f"{{round: {round_}}}",
        env={CRASH_ENV: step, BUILDS_ENV: str(len(STREAM_MODELS))},
    )
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
