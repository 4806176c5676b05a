"""Streams over Spark Connect (`method: connect`) on a real cluster of separate processes.

`scripts/cluster.py` starts a Spark standalone master, two workers (one core each), a Spark
Connect server with Delta attached to the master and a Derby network server holding the Hive
metastore; every process sees one warehouse. The integration project (`threads: 4`) is built
over it end to end, each step a separate dbt process: sources, a build, a batch of changes, a
build that fails (a source is away) and moves no offset of the streams reading it, the build
that consumes the batch once (its data tests pass: the mirror equals its source, changes()
equals a peek, the view stream's mirror equals its view, the insert-only stream of a Parquet
table logs every landed event once), and a build with nothing pending. The registry must show
each table stream's offset at its source's newest version, the append-only audit every order
once, and a query Delta rejects must show Delta's error, not the server's stack trace.
"""

import shutil
from collections.abc import Iterator

import pytest
from pyspark.sql.connect.session import SparkSession as ConnectSession

from scripts import cluster
from tests.conftest import INTERPRETED
from tests.integration.dbt_process import run_dbt_process
from tests.integration.test_shop_project import PROJECT, RUNTIME_DIRS

PAST_LATEST_CHANGES = "select * from table_changes('shop_raw.orders', 999, 1000)"
# The project's stream_incremental models: each says so when a build finds nothing pending.
STREAM_MODELS = 5


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The cluster's Spark Connect port. Its server runs interpreted expressions, as the
    functional tests do (90 fewer CPU-seconds for this module, most of them the executors'
    compiles); the embedded integration-project test keeps Spark's defaults covered."""
    home = tmp_path_factory.mktemp("cluster")
    try:
        yield cluster.start(home, server_confs=INTERPRETED)["ports"]["connect"]
    finally:
        cluster.stop(home)


def connect(port: int) -> ConnectSession:
    """Spark Connect's own builder: pyspark's common one refuses a remote session in a process
    that already runs an embedded one, as `make test`'s process does."""
    return ConnectSession.builder.remote(f"sc://localhost:{port}").getOrCreate()


def query(port: int, statement: str) -> list[tuple]:
    spark = connect(port)
    try:
        return [tuple(row) for row in spark.sql(statement).collect()]
    finally:
        spark.stop()


def shop_offsets(port: int) -> dict[str, int]:
    return dict(query(port, "select name, offset_version from shop.dbt_streams"))


def behind_newest(port: int) -> dict[str, tuple[int, int]]:
    """The Delta streams whose offset is not their source's newest version: (offset, newest)."""
    streams = query(
        port,
        "select name, source_table, offset_version from shop.dbt_streams "
        "where source_type = 'delta'",
    )
    newest = {
        table: query(port, f"describe history {table} limit 1")[0][0]
        for table in {table for _, table, _ in streams}
    }
    return {
        name: (offset, newest[table]) for name, table, offset in streams if offset != newest[table]
    }


def on_customers(offsets: dict[str, int]) -> dict[str, int]:
    """The offsets of the streams that read shop_raw.customers (directly or through a view)."""
    return {name: offset for name, offset in offsets.items() if "customers" in name}


def test_integration_project_over_the_cluster(
    server: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shop = tmp_path_factory.mktemp("shop-cluster") / "integration_project"
    shutil.copytree(PROJECT, shop, ignore=shutil.ignore_patterns(*RUNTIME_DIRS))
    (shop / "profiles.yml").write_text(
        "shop:\n  target: dev\n  outputs:\n    dev:\n      type: spark_streams\n"
        f"      method: connect\n      host: sc://localhost:{server}\n"
        "      schema: shop\n      threads: 4\n"
    )
    steps = [("run-operation", "create_shop_sources", "--args", "{customers: 10}"), ("build",)]
    for step in steps:
        done = run_dbt_process(shop, *step)
        assert done.returncode == 0, done.stdout + done.stderr
    built = shop_offsets(server)
    assert len(built) == 7, built  # four table streams, one view stream and its two tables

    changed = run_dbt_process(shop, "run-operation", "apply_shop_changes")
    assert changed.returncode == 0, changed.stdout + changed.stderr
    query(server, "alter table shop_raw.customers rename to shop_raw.customers_away")
    failed = run_dbt_process(shop, "build")
    assert failed.returncode != 0, failed.stdout
    # The builds reading customers failed and moved none of their offsets (the orders audit,
    # which does not read customers, consumed its batch).
    assert on_customers(shop_offsets(server)) == on_customers(built)
    query(server, "alter table shop_raw.customers_away rename to shop_raw.customers")

    consumed = run_dbt_process(shop, "build")
    assert consumed.returncode == 0, consumed.stdout + consumed.stderr
    assert "PASS assert_customers_mirror_matches_source" in consumed.stdout
    assert "PASS assert_pending_changes_match_peek" in consumed.stdout  # changes() over Connect
    assert "PASS assert_order_customers_mirror_matches_view" in consumed.stdout
    assert "PASS assert_order_events_logged_once" in consumed.stdout
    moved = shop_offsets(server)
    assert all(moved[name] > built[name] for name in ("customers_mirror__customers",)), moved
    assert behind_newest(server) == {}
    # The append-only audit holds every order once (orders are inserted and updated, never
    # deleted, and an append-only stream reports only the inserts).
    audited = query(server, "select count(*), count(distinct order_id) from shop.orders_audit")
    assert audited == query(server, "select count(*), count(*) from shop_raw.orders")

    again = run_dbt_process(shop, "run")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "consumed" not in again.stdout, again.stdout
    assert again.stdout.count("no pending changes") == STREAM_MODELS, again.stdout
    assert shop_offsets(server) == moved

    # A Delta error reaches the user as Delta words it, without the server's JVM stack.
    rejected = run_dbt_process(shop, "show", "--inline", PAST_LATEST_CHANGES)
    assert rejected.returncode != 0, rejected.stdout
    assert "[DELTA_CDC_START_VERSION_AFTER_LATEST] Start version 999" in rejected.stdout, (
        rejected.stdout
    )
    assert "JVM stacktrace" not in rejected.stdout, rejected.stdout
