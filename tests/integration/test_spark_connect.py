"""Streams over Spark Connect (`method: connect`): the same builds, against a real server.

The test starts a Spark Connect server with Delta (pyspark ships the server; the Delta jars
come the way the embedded session gets them), points the crash project at it and builds it
round after round as separate dbt processes: the data tests assert the mirror equals its
source, the audit holds every order once (and the events audit, an insert-only stream of a
Parquet table, every landed row once) and a view stream's mirror equals its view, and the
registry must show each table stream's offset at its source's newest version. A query Delta
rejects must show Delta's error, not the server's stack trace.
"""

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest
from pyspark.sql.connect.session import SparkSession as ConnectSession

from dbt.adapters.spark_streams.embedded_session import DELTA_CATALOG, DELTA_EXTENSION, jar_confs
from tests.conftest import session_credentials
from tests.integration.dbt_process import run_dbt_process
from tests.integration.ports import free_port

PROJECT = Path(__file__).resolve().parent / "crash_project"
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
STARTUP_SECONDS = 300
PAST_LATEST_CHANGES = "select * from table_changes('crash_raw.orders', 999, 1000)"
# changes() over Connect: the mirror with the changes pending since its stream's offset applied
# (its DELETEs removed, its INSERTs added) is the source, whether or not the mirror is current.
PENDING = (
    "changes(source('raw', 'customers'), at={'stream': 'customers_mirror__customers'}, "
    "unique_key='id')"
)
MIRROR_PLUS_PENDING = f"""
with applied as (
  select id, name, tier from {{{{ ref('customers_mirror') }}}}
  where id not in (select id from {{{{ {PENDING} }}}} where metadata_action = 'DELETE')
  union all
  select id, name, tier from {{{{ {PENDING} }}}} where metadata_action = 'INSERT'
),
source as (select id, name, tier from {{{{ source('raw', 'customers') }}}})
(select * from applied except all select * from source)
union all
(select * from source except all select * from applied)
"""


def server_command(home: Path, port: int) -> list[str]:
    """spark-submit of pyspark's own Spark Connect server, with Delta as a user would run it."""
    confs = {
        **jar_confs(session_credentials(home)),
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
        "spark.sql.warehouse.dir": str(home / "warehouse"),
        "spark.sql.shuffle.partitions": "1",
        "spark.databricks.delta.snapshotPartitions": "1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.ui.enabled": "false",
    }
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    options = [item for key, value in confs.items() for item in ("--conf", f"{key}={value}")]
    return [str(submit), "--master", "local[2]", "--driver-memory", "1g", "--class",
            SERVER_CLASS, *options, "spark-internal"]  # fmt: skip


def wait_for_port(server: subprocess.Popen, port: int, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"the Spark Connect server exited:\n{log.read_text()[-4000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("localhost", port)) == 0:
                return
        time.sleep(1)
    raise AssertionError(f"no Spark Connect server on port {port}:\n{log.read_text()[-4000:]}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    home, port = tmp_path_factory.mktemp("connect-server"), free_port()
    log = home / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            server_command(home, port), cwd=home, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        wait_for_port(process, port, log)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=60)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, server: int) -> Path:
    root = tmp_path_factory.mktemp("connect") / "crash_project"
    shutil.copytree(PROJECT, root)
    (root / "tests" / "mirror_plus_pending_is_source.sql").write_text(MIRROR_PLUS_PENDING)
    (root / "profiles.yml").write_text(
        "crash:\n  target: dev\n  outputs:\n    dev:\n      type: spark_streams\n"
        f"      method: connect\n      host: sc://localhost:{server}\n"
        "      schema: crash\n      threads: 1\n"
    )
    return root


def newest_versions(port: int) -> dict[str, tuple[int, int]]:
    """Per stream in the registry: (its offset, its source's newest version).

    Spark Connect's own builder: pyspark's common one refuses a remote session in a process
    that already runs an embedded one, as `make test`'s process does.
    """
    spark = ConnectSession.builder.remote(f"sc://localhost:{port}").getOrCreate()
    try:
        streams = spark.sql(
            "select name, source_table, offset_version from crash.dbt_streams "
            "where source_type = 'delta'"
        )
        return {
            row["name"]: (
                row["offset_version"],
                spark.sql(f"describe history {row['source_table']} limit 1").first()["version"],
            )
            for row in streams.collect()
        }
    finally:
        spark.stop()


def test_builds_over_spark_connect(server: int, project: Path) -> None:
    for round_ in range(3):
        built = run_dbt_process(project, "build", "--vars", f"{{round: {round_}}}")
        assert built.returncode == 0, built.stdout + built.stderr
        assert "PASS mirror_equals_source" in built.stdout
        assert "PASS audit_has_each_order_once" in built.stdout
        assert "PASS mirror_plus_pending_is_source" in built.stdout
        assert "PASS paired_mirror_is_view" in built.stdout
        assert "PASS events_audit_has_each_event_once" in built.stdout  # an insert-only stream
        assert "consumed" in built.stdout

    offsets = newest_versions(server)
    assert set(offsets) == {
        "customers_mirror__customers",
        "orders_audit__orders",
        "paired_mirror__paired@crash_raw.orders",  # the view stream's offset on each table
        "paired_mirror__paired@crash_raw.customers",
    }, offsets
    assert all(offset == newest for offset, newest in offsets.values()), offsets

    again = run_dbt_process(project, "run")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("no pending changes") == 4, again.stdout

    # A Delta error reaches the user as Delta words it, without the server's JVM stack.
    failed = run_dbt_process(project, "show", "--inline", PAST_LATEST_CHANGES)
    assert failed.returncode != 0, failed.stdout
    assert "[DELTA_CDC_START_VERSION_AFTER_LATEST] Start version 999" in failed.stdout, (
        failed.stdout
    )
    assert "JVM stacktrace" not in failed.stdout, failed.stdout
