"""Two dbt processes on one object store and one PostgreSQL metastore, as a team runs them: the
crash project's stream models (an apply_changes mirror, an append-only audit, an insert-only
stream of a file table, a view stream's mirror), every table at s3a://. The project's
materialized view and apply_cdc models are left out (`--exclude`): they commit as the stream
models do, and the crash tests of `make integration` build them; here they would lengthen each
dbt process.

Each round, a few events land in the file table's folder, then two processes build at once: the
same consumers (each build succeeds or is refused with "being consumed by another run") and,
one in each process, two insert-only stream models of one folder (both record their files in
the shared dbt_streams_files, and both must succeed). A plain build afterwards passes the
project's invariants (the mirror equals its source, each order audited exactly once, each
landed event exactly once by each of the two models, the view's mirror equals the view).
STORE_ROUNDS (default 1) sets the rounds.
"""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.conftest import STORES_ENV
from tests.integration.cluster_queries import succeeded_models
from tests.integration.dbt_process import dbt_command, run_dbt_process
from tests.integration.test_crash_safety import INVARIANTS, PROJECT, assert_invariants

ROUNDS = int(os.environ.get("STORE_ROUNDS", "1"))
REFUSED = "being consumed by another run"
LEFT_OUT = ("tiers", "order_state", "order_history")
EXCLUDE = ("--exclude", *LEFT_OUT)
CHECKED = tuple(name for name in INVARIANTS if not name.startswith(LEFT_OUT))

pytestmark = pytest.mark.skipif(
    not os.environ.get(STORES_ENV), reason="needs `make test-store` (scripts/with_stores.py)"
)


def process_env(tag: str, database: str) -> dict[str, str]:
    """The crash project's settings for the stores `make test-store` started: a warehouse of
    its own under s3a://<bucket>/<tag>-..., the catalog in PostgreSQL's `database`."""
    stores = Path(os.environ[STORES_ENV])
    s3 = json.loads((stores / "s3" / "object-store.json").read_text())
    postgres = json.loads((stores / "postgres" / "postgres.json").read_text())
    return {
        "CRASH_WAREHOUSE_DIR": f"s3a://{s3['bucket']}/{tag}-{time.time_ns()}/warehouse",
        "CRASH_S3_ENDPOINT": f"http://127.0.0.1:{s3['port']}",
        "CRASH_S3_ACCESS_KEY": s3["access_key"],
        "CRASH_S3_SECRET_KEY": s3["secret_key"],
        "CRASH_S3_VERSION_REQUIRED": "false",  # as tests/conftest.py says
        "CRASH_METASTORE_URL": postgres["url"].rsplit("/", 1)[0] + f"/{database}",
        "CRASH_METASTORE_USER": postgres["user"],
        "CRASH_METASTORE_PASSWORD": postgres["password"],
        "CRASH_METASTORE_DRIVER_JAR": postgres["driver_jar"],
        "SPARK_STREAMS_CDS": "0",  # a few processes: an archive's training would outlast them
    }


@pytest.fixture(scope="module")
def store_env() -> dict[str, str]:
    return process_env("procs", "metastore_procs")


def at_once(*commands: dict) -> list[tuple[int, str]]:
    processes = [subprocess.Popen(**command) for command in commands]
    return [(p.wait(timeout=900), p.communicate()[0]) for p in processes]


def with_second_file_stream(project: Path) -> None:
    """A second insert-only stream model of the events folder, and its exactly-once test."""
    models, tests = project / "models", project / "tests"
    (models / "events_audit_b.sql").write_text((models / "events_audit.sql").read_text())
    check = (tests / "events_audit_has_each_event_once.sql").read_text()
    (tests / "events_audit_b_has_each_event_once.sql").write_text(
        check.replace("ref('events_audit')", "ref('events_audit_b')")
    )


def land_events(spark: SparkSession, env: dict[str, str], round_: int) -> None:
    """Five events written into the file table's folder before a round's processes start, so
    both insert-only models have new files to consume at once."""
    folder = f"{env['CRASH_WAREHOUSE_DIR']}/crash_raw.db/events"
    rows = [(100 * round_ + 50 + i, "direct") for i in range(5)]
    spark.createDataFrame(rows, "id int, kind string").write.mode("append").parquet(folder)


def test_two_processes_on_one_store(
    tmp_path: Path, store_env: dict[str, str], spark: SparkSession
) -> None:
    project = tmp_path / "crash_project"
    shutil.copytree(PROJECT, project)
    with_second_file_stream(project)
    first = run_dbt_process(project, "build", *EXCLUDE, "--vars", "{round: 0}", env=store_env)
    assert first.returncode == 0, first.stdout + first.stderr
    refusals = 0
    for round_ in range(1, ROUNDS + 1):
        land_events(spark, store_env, round_)
        # a lands a round of changes (more files among them) and builds every consumer but
        # events_audit_b; b builds every consumer but events_audit
        same = at_once(
            dbt_command(
                project,
                "run",
                *EXCLUDE,
                "events_audit_b",
                "--vars",
                f"{{round: {round_}}}",
                name="a",
                env=store_env,
            ),
            dbt_command(project, "run", *EXCLUDE, "events_audit", name="b", env=store_env),
        )
        for returncode, output in same:
            assert returncode == 0 or REFUSED in output, output
            refusals += REFUSED in output
        # two models of one folder, one in each process: neither is refused
        assert "events_audit" in succeeded_models(project, "target_a"), same[0][1]
        assert "events_audit_b" in succeeded_models(project, "target_b"), same[1][1]
        if round_ < ROUNDS:  # the last round's are checked with the last build
            assert_invariants(run_dbt_process(project, "build", *EXCLUDE, env=store_env), CHECKED)
    checked = run_dbt_process(project, "build", *EXCLUDE, env=store_env)
    # the last round's invariants, and a file-set part lost to the other process would show
    # here as events read twice
    assert_invariants(checked, CHECKED)
    assert "PASS events_audit_b_has_each_event_once" in checked.stdout
    print(f"{ROUNDS} rounds, {refusals} builds refused as consumed by another run")
