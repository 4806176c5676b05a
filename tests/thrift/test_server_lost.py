"""A Spark Thrift Server killed in the middle of a `--threads 4` run (`make test-thrift`): every
model of the run says so in one sentence, and once the server is back the next build consumes
each change once (the crash project's invariants: the mirror equals its source, each order and
each landed event audited once, the view's mirror equals the view). And the server killed the
moment a write's commit lands (a MERGE's, an INSERT's), before its reply: the commit carries
the build's offset, so the next build finds nothing pending and consumes nothing twice.

The test starts a server of its own (scripts/thrift_server.py, its metastore embedded), so that
killing it leaves the other tests' server alone.
"""

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts import thrift_server
from tests.conftest import THRIFT_ENV
from tests.integration.dbt_process import dbt_command, run_dbt_process
from tests.integration.test_crash_safety import PROJECT, assert_invariants

pytestmark = pytest.mark.skipif(
    not os.environ.get(THRIFT_ENV), reason="needs `make test-thrift` (scripts/with_thrift.py)"
)

PROFILE = """crash:
  target: dev
  outputs:
    dev:
      type: spark_streams
      method: thrift
      host: 127.0.0.1
      port: {port}
      user: dbt
      schema: crash
      threads: 4
"""
STREAM_START = "START sql stream_incremental model"
LOST = "stopped answering (TTransportException"


def point_at(project: Path, server: dict) -> None:
    (project / "profiles.yml").write_text(PROFILE.format(port=server["port"]))


@pytest.fixture
def built(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """The crash project (its folder) built once over a server of its own (its home)."""
    project = tmp_path / "crash_project"
    shutil.copytree(PROJECT, project)
    home = tmp_path / "server"
    point_at(project, thrift_server.start(home))
    try:
        first = run_dbt_process(project, "build", "--vars", "{round: 0}")
        assert first.returncode == 0, first.stdout
        yield project, home
    finally:
        thrift_server.stop(home)


def test_a_server_killed_mid_run_then_the_next_build(built: tuple[Path, Path]) -> None:
    project, home = built
    run = subprocess.Popen(
        **dbt_command(project, "run", "--vars", "{round: 1}"), start_new_session=True
    )
    output = ""
    assert run.stdout is not None
    for line in run.stdout:  # the run's first stream build has started
        output += line
        if STREAM_START in line:
            break
    time.sleep(2)
    thrift_server.kill(home)
    output += run.communicate(timeout=600)[0]
    assert run.returncode != 0, output
    failures = re.findall(r"Failure in model (\w+)", output)
    assert failures, output
    assert output.count(LOST) >= len(failures), output  # each failed model, one sentence
    # (dbt-spark's own notice of its retry names the transport's error: not a failure)
    assert "Traceback" not in output
    point_at(project, thrift_server.start(home))
    assert_invariants(run_dbt_process(project, "build"))


@pytest.mark.parametrize("model", ["customers_mirror", "orders_audit"])  # a MERGE, an INSERT
def test_a_server_killed_between_a_writes_commit_and_its_reply(
    built: tuple[Path, Path], model: str
) -> None:
    project, home = built
    log = home / "warehouse" / "crash.db" / model / "_delta_log"
    committed = max(int(path.stem) for path in log.glob("*.json"))
    fired = thrift_server.kill_on_commit(home, log, committed + 1)
    run = run_dbt_process(project, "run", "--select", model, "--vars", "{round: 1}")
    assert fired.is_set(), run.stdout  # the write committed, and the server died then
    assert run.returncode != 0, run.stdout
    assert f"Failure in model {model}" in run.stdout
    assert LOST in run.stdout and "Traceback" not in run.stdout
    point_at(project, thrift_server.start(home))
    assert_invariants(run_dbt_process(project, "build"))
    # the killed build's commit carries its offset: the next build found nothing pending
    assert max(int(path.stem) for path in log.glob("*.json")) == committed + 1
