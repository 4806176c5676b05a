"""Streams over Spark Connect (`method: connect`) on a real cluster of separate processes.

`scripts/cluster.py` starts a Spark standalone master, two workers (one core each), a Spark
Connect server with Delta attached to the master and a Derby network server holding the Hive
metastore; every process sees one warehouse. Two projects are built over it as separate dbt
processes:

- the crash project, round after round: its data tests assert the mirror equals its source,
  the audit holds every order once (and the events audit, an insert-only stream of a Parquet
  table, every landed row once) and a view stream's mirror equals its view; the registry must
  show each table stream's offset at its source's newest version. A query Delta rejects must
  show Delta's error, not the server's stack trace.
- the integration project (`threads: 4`), end to end: sources, a build, a batch of changes, a
  build that fails (a source is away) and moves no offset, the build that consumes the batch
  once (its data tests pass), and a build with nothing pending.
"""

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql.connect.session import SparkSession as ConnectSession

from scripts import cluster
from tests.integration.dbt_process import run_dbt_process

PROJECT = Path(__file__).resolve().parent / "crash_project"
SHOP = Path(__file__).resolve().parents[2] / "integration_project"
SHOP_RUNTIME = ("target", "logs", "spark-warehouse", "metastore", "dbt_packages")
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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The cluster's Spark Connect port."""
    home = tmp_path_factory.mktemp("cluster")
    try:
        yield cluster.start(home)["ports"]["connect"]
    finally:
        cluster.stop(home)


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


def connect(port: int) -> ConnectSession:
    """Spark Connect's own builder: pyspark's common one refuses a remote session in a process
    that already runs an embedded one, as `make test`'s process does."""
    return ConnectSession.builder.remote(f"sc://localhost:{port}").getOrCreate()


def newest_versions(port: int) -> dict[str, tuple[int, int]]:
    """Per stream in the registry: (its offset, its source's newest version)."""
    spark = connect(port)
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


def shop_offsets(port: int) -> dict[str, int]:
    spark = connect(port)
    try:
        rows = spark.sql("select name, offset_version from shop.dbt_streams").collect()
        return {row["name"]: row["offset_version"] for row in rows}
    finally:
        spark.stop()


def on_customers(offsets: dict[str, int]) -> dict[str, int]:
    """The offsets of the streams that read shop_raw.customers (directly or through a view)."""
    return {name: offset for name, offset in offsets.items() if "customers" in name}


def run_sql(port: int, statement: str) -> None:
    spark = connect(port)
    try:
        spark.sql(statement).collect()
    finally:
        spark.stop()


def test_integration_project_over_the_cluster(
    server: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shop = tmp_path_factory.mktemp("shop-cluster") / "integration_project"
    shutil.copytree(SHOP, shop, ignore=shutil.ignore_patterns(*SHOP_RUNTIME))
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
    run_sql(server, "alter table shop_raw.customers rename to shop_raw.customers_away")
    failed = run_dbt_process(shop, "build")
    assert failed.returncode != 0, failed.stdout
    # The builds reading customers failed and moved none of their offsets (the orders audit,
    # which does not read customers, consumed its batch).
    assert on_customers(shop_offsets(server)) == on_customers(built)
    run_sql(server, "alter table shop_raw.customers_away rename to shop_raw.customers")

    consumed = run_dbt_process(shop, "build")
    assert consumed.returncode == 0, consumed.stdout + consumed.stderr
    assert "PASS assert_customers_mirror_matches_source" in consumed.stdout
    assert "PASS assert_order_customers_mirror_matches_view" in consumed.stdout
    assert "PASS assert_order_events_logged_once" in consumed.stdout
    moved = shop_offsets(server)
    assert all(moved[name] > built[name] for name in ("customers_mirror__customers",)), moved

    again = run_dbt_process(shop, "run")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "consumed" not in again.stdout, again.stdout
    assert shop_offsets(server) == moved
