"""Two dbt processes building the same consumer at once never both consume.

Both processes share one Hive metastore through a Derby network server (started by the
project's own script) and one warehouse. Each round one process changes the sources and both
build; each must succeed or fail with "is being consumed by another run", and a plain build
afterwards must pass the invariant tests: the mirror equals its source, and the append-only
audit holds every order exactly once, the events audit (an insert-only stream of a file
table) every row of every landed file, and a view stream's mirror equals its view.
"""

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.dbt_process import dbt_command, run_dbt_process
from tests.integration.ports import free_port

REPO = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).resolve().parent / "crash_project"
SERVER = REPO / "scripts" / "metastore-server.sh"
DRIVER = REPO / ".jars" / "derby-server" / "derbyclient-10.16.1.1.jar"
ROUNDS = int(os.environ.get("CONCURRENCY_ROUNDS", "1"))  # `make fuzz` runs more


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path_factory.mktemp("concurrency") / "crash_project"
    shutil.copytree(PROJECT, root)
    home, port = root / "metastore-server", str(free_port())
    subprocess.run(["bash", str(SERVER), "start", str(home), port], check=True, timeout=600)
    env = {
        "CRASH_METASTORE_URL": f"jdbc:derby://localhost:{port}/metastore_db;create=true",
        "CRASH_METASTORE_DRIVER_JAR": str(DRIVER),
    }
    try:
        first = run_dbt_process(root, "build", "--vars", "{round: 0}", env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        yield root, env
    finally:
        subprocess.run(["bash", str(SERVER), "stop", str(home), port], check=False)


def test_two_builds_of_one_consumer_at_once(shared: tuple[Path, dict[str, str]]) -> None:
    root, env = shared
    for round_ in range(1, ROUNDS + 1):
        both = [
            dbt_command(root, "run", "--vars", f"{{round: {round_}}}", name="a", env=env),
            dbt_command(root, "run", name="b", env=env),
        ]
        processes = [subprocess.Popen(**command) for command in both]
        outputs = [process.communicate(timeout=900)[0] for process in processes]
        for process, output in zip(processes, outputs, strict=True):
            lost = "is being consumed by another run" in output
            assert process.returncode == 0 or lost, output
            print(f"round {round_}: rc={process.returncode} lost={lost}")

        checked = run_dbt_process(root, "build", env=env)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "PASS mirror_equals_source" in checked.stdout
        assert "PASS audit_has_each_order_once" in checked.stdout
        assert "PASS events_audit_has_each_event_once" in checked.stdout
        assert "PASS paired_mirror_is_view" in checked.stdout
