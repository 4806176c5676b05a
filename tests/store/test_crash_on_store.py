"""Builds SIGKILLed at each step of the commit protocol, on an object store with a PostgreSQL
metastore, lose nothing and repeat nothing: the crash project's four stream models run at once
(`--threads 4`) and the process dies once all four builds reached the step (after pinning,
during the write, after the commit but before the registry update). Each killed build leaves
its consumer's lease on the store; the recovery build takes it over (its process is gone) and
its data tests assert the invariants (tests/integration/test_crash_safety.py).

`make test-store-long` runs this with the two-process test's 20 rounds; each step costs two
dbt processes, too long for `make test-store`.
"""

import os
import shutil
from pathlib import Path

import pytest

from dbt.adapters.spark_streams.streams.builds.faults import STEPS
from tests.conftest import STORES_ENV
from tests.integration.dbt_process import run_dbt_process
from tests.integration.test_crash_safety import PROJECT, assert_invariants, killed_at
from tests.store.test_two_processes import process_env

pytestmark = pytest.mark.skipif(
    not (os.environ.get(STORES_ENV) and os.environ.get("STORE_LONG")),
    reason="needs `make test-store-long` (an object store, PostgreSQL, STORE_LONG=1)",
)


@pytest.fixture(scope="module")
def store_env() -> dict[str, str]:
    return process_env("crash", "metastore_crash")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, store_env: dict[str, str]) -> Path:
    root = tmp_path_factory.mktemp("crash-on-store") / "crash_project"
    shutil.copytree(PROJECT, root)
    first = run_dbt_process(root, "build", "--vars", "{round: 0}", env=store_env)
    assert first.returncode == 0, first.stdout + first.stderr
    return root


@pytest.mark.parametrize("step", STEPS)
def test_killed_build_on_the_store_then_recovery(
    project: Path, store_env: dict[str, str], step: str
) -> None:
    killed_at(project, step, store_env)
    # no wait for the killed JVM: a PostgreSQL metastore admits the next process at once, and
    # the leases it left name a process that is gone
    assert_invariants(run_dbt_process(project, "build", env=store_env))
