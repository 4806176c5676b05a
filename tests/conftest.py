"""Shared fixtures: one embedded Spark session per test process, in a throwaway catalog."""

import getpass
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import DEFAULT_JVM_OPTIONS, SparkStreamsCredentials
from dbt.adapters.spark_streams.session.embedded import start_embedded_session

pytest_plugins = ["dbt.tests.fixtures.project"]

# Property tests run on real Spark: a few derandomized examples in `make test`, many random
# ones in `make fuzz` (HYPOTHESIS_PROFILE=fuzz).
settings.register_profile(
    "ci",
    max_examples=3,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
settings.register_profile(
    "fuzz", max_examples=40, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The longest test modules of each tier, longest first (their seconds in a fresh-clone run on
# a slow day; `make measure` measures them). The tiers run on pytest-xdist workers, each
# module or class on one worker; handing the long ones out first keeps the run from ending on
# one of them while the other worker idles.
LONGEST_FIRST = (
    "tests/integration/test_spark_connect.py",  # 825 s alone
    "tests/integration/test_crash_safety.py",  # 300 s
    "tests/integration/adapter/suites/test_features.py",
    "tests/integration/adapter/suites/test_incremental.py",
    "tests/store/test_two_processes.py",  # 300 s
    "tests/functional/streams/test_fuzz.py",
    "tests/functional/streams/test_materialized_views.py",  # 250 s
    "tests/functional/streams/test_dbt_edges.py",  # 270 s on the object store
    "tests/functional/streams/test_apply_cdc.py",  # 130 s, 175 s on the object store
    "tests/functional/streams/test_view_paths.py",  # 150 s
    "tests/functional/streams/test_file_streams.py",  # 125 s
    "tests/functional/streams/test_system_time.py",  # 120 s on the object store
    "tests/functional/streams/test_source_schema_change.py",  # 115 s
    "tests/functional/streams/test_threads.py",  # 105 s
    "tests/functional/streams/test_view_streams.py",  # 100 s on the object store
    "tests/functional/streams/test_type_widening.py",  # 80 s
    "tests/functional/streams/test_staleness.py",  # 75 s
    "tests/functional/streams/test_mv_conventions.py",  # 70 s
    "tests/functional/streams/test_append_path.py",  # 60 s
    "tests/functional/streams/test_merge_schema_evolution.py",  # 60 s
    "tests/functional/streams/test_column_types.py",  # 60 s
    "tests/functional/streams/test_history.py",  # 55 s (125 s with make fuzz's class)
    "tests/functional/streams/test_apply_cdc_debezium.py",  # 55 s
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules of LONGEST_FIRST first, in that order; the rest as collected."""

    def rank(item: pytest.Item) -> int:
        module = item.nodeid.split("::")[0]
        return LONGEST_FIRST.index(module) if module in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


@pytest.fixture(scope="session")
def spark_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Warehouse, metastore and JVM log shared by every test in this process."""
    return tmp_path_factory.mktemp("spark")


# The functional tests' tables hold a handful of rows: Spark's interpreted expressions run them
# in a fraction of the time Janino takes to compile generated code for every new expression (a
# third of a tiny MERGE's time), and adaptive query execution re-plans each query for data
# that small for nothing (test_staleness and test_system_time: 136 s instead of 146 s). Both
# paths compute the same results (Spark tests one against the other); the matrix's Spark
# Thrift Server runs Spark's defaults, so generated code and adaptive execution stay covered
# (and adaptive execution on the cluster test's server).
INTERPRETED = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
}


def session_target(spark_home: Path) -> dict:
    """The profile target every test uses, so whichever test starts Spark first, it is this."""
    target = {
        "type": "spark_streams",
        "method": "session",
        "threads": 1,
        "warehouse_dir": str(spark_home / "warehouse"),
        "metastore_dir": str(spark_home / "metastore"),
        "jvm_log": str(spark_home / "spark-jvm.log"),
        "shuffle_partitions": 1,
        "driver_memory": "2g",
        # The adapter's default jvm_options (the JIT's quick tier: with the full JIT the C2
        # compiler threads took 38 of a test_staleness JVM's 80 CPU-seconds; `make test` is
        # CPU-bound on two cores, so every compile there delays another worker's queries), and
        # the serial collector, which spends less CPU than G1 on a test's small heap
        # (test_staleness alone: 67 and 68 instead of 70 and 71 CPU-seconds, side by side).
        "jvm_options": f"{DEFAULT_JVM_OPTIONS} -XX:+UseSerialGC",
        "server_side_parameters": INTERPRETED,
    }
    jars_dir = os.environ.get("SPARK_STREAMS_JARS_DIR")
    if jars_dir:
        target["jars_dir"] = jars_dir
    stores, thrift = os.environ.get(STORES_ENV), os.environ.get(THRIFT_ENV)
    if thrift:
        return {**target, **thrift_shared(Path(thrift))}
    return {**target, **store_settings(Path(stores), spark_home)} if stores else target


# Set by scripts/with_thrift.py (`make test-thrift`): the folder of the Thrift Server's state
# (thrift/thrift-server.json), its PostgreSQL metastore's (postgres/postgres.json) and its
# warehouse. dbt reaches Spark over thrift; a test process's embedded session shares the
# server's warehouse and catalog.
THRIFT_ENV = "SPARK_STREAMS_THRIFT"


def thrift_shared(home: Path) -> dict:
    from scripts.with_thrift import server_profile

    return server_profile(home, json.loads((home / "postgres" / "postgres.json").read_text()))


def thrift_target(home: Path) -> dict:
    """A `method: thrift` target at the Thrift Server with_thrift.py started."""
    server = json.loads((home / "thrift" / "thrift-server.json").read_text())
    return {"type": "spark_streams", "method": "thrift", "host": "127.0.0.1",
            "port": server["port"], "user": getpass.getuser(), "threads": 1}  # fmt: skip


# Set by scripts/with_stores.py (`make test-store`): the folder whose object-store.json and
# postgres.json say where the object store and the PostgreSQL server run.
STORES_ENV = "SPARK_STREAMS_STORES"


def store_settings(stores: Path, spark_home: Path) -> dict:
    """The profile keys that put a test process's tables on the object store (a folder of the
    bucket per process) and its catalog in PostgreSQL (a database per test worker)."""
    s3 = json.loads((stores / "s3" / "object-store.json").read_text())
    postgres = json.loads((stores / "postgres" / "postgres.json").read_text())
    worker = os.environ.get("PYTEST_XDIST_WORKER", "master")
    return {
        "warehouse_dir": f"s3a://{s3['bucket']}/{spark_home.name}-{worker}/warehouse",
        "metastore_url": postgres["url"].rsplit("/", 1)[0] + f"/metastore_{worker}",
        "metastore_user": postgres["user"],
        "metastore_password": postgres["password"],
        "metastore_driver_jar": postgres["driver_jar"],
        "server_side_parameters": {
            **INTERPRETED,
            "spark.hadoop.fs.s3a.endpoint": f"http://127.0.0.1:{s3['port']}",
            "spark.hadoop.fs.s3a.access.key": s3["access_key"],
            "spark.hadoop.fs.s3a.secret.key": s3["secret_key"],
            # S3Proxy answers a copy of a folder marker without an ETag, which S3A's change
            # detection requires by default (a managed table's RENAME copies its folder).
            "spark.hadoop.fs.s3a.change.detection.version.required": "false",
        },
    }


@pytest.fixture(scope="class")
def dbt_profile_target(spark_home: Path) -> dict:
    """A `spark_streams` session target; the first test to connect starts the session (under
    `make test-thrift`, a thrift target instead)."""
    thrift = os.environ.get(THRIFT_ENV)
    return thrift_target(Path(thrift)) if thrift else session_target(spark_home)


def session_credentials(spark_home: Path) -> SparkStreamsCredentials:
    """The credentials dbt would parse from `session_target`, for code that starts Spark."""
    profile = {k: v for k, v in session_target(spark_home).items() if k not in ("type", "threads")}
    return SparkStreamsCredentials.from_dict({"schema": "default", **profile})


@pytest.fixture(scope="session")
def spark(spark_home: Path) -> SparkSession:
    """The process's embedded session, for tests that drive Spark SQL directly."""
    return start_embedded_session(session_credentials(spark_home))


@pytest.fixture(scope="class")
def profile_user() -> str:
    """Spark records the OS user as the owner of what it creates."""
    return getpass.getuser()
