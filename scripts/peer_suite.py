"""dbt-spark's own functional tests, run against this adapter (`make peer`).

dbt-spark's source distribution on PyPI ships its functional tests. This downloads the one of
the installed dbt-spark version (pip download, by pinned version: nothing of it is kept in
this repository), points the profile those tests use for Spark's in-process session
(`--profile spark_session`) at a `spark_streams` session, and runs every test dbt-spark runs
for that profile: tests marked `skip_profile('spark_session')` are skipped by dbt-spark's own
fixture, as in its CI.

Deselected on dbt-core 1.11, with the reason: three tests of `TestSparkEmptySeedFlag` run `dbt
seed --empty`, a flag of dbt-core 1.12 (`No such option '--empty'`), or expect `dbt build
--empty` to leave seeds empty, which that flag brings; they fail the same way against
dbt-spark itself. Its fourth test (a plain `dbt seed`) runs. On dbt-core 1.12 (`make matrix`
runs it there) nothing is deselected.

Usage: scripts/peer_suite.py [extra pytest arguments]
"""

import json
import os
import subprocess
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / "build" / "peer"
EMPTY_SEEDS = "tests/functional/adapter/empty/test_empty.py::TestSparkEmptySeedFlag::"
NEWER_DBT = "dbt seed --empty, and seeds left empty by dbt build --empty: dbt-core 1.12"
OLDER_DBT = tuple(int(part) for part in version("dbt-core").split(".")[:2]) < (1, 12)
DESELECTED = (
    {
        EMPTY_SEEDS + "test_seed_empty_creates_table_with_zero_rows": NEWER_DBT,
        EMPTY_SEEDS + "test_seed_empty_preserves_column_types": NEWER_DBT,
        EMPTY_SEEDS + "test_build_empty_with_seed": NEWER_DBT,
    }
    if OLDER_DBT
    else {}
)
# Appended to dbt-spark's tests/functional/fixtures/profiles.py: its session profile, here.
PROFILE_HOOK = """

# Added by dbt-spark-streams' scripts/peer_suite.py: the session profile is this adapter's.
def spark_session_target():
    import json, os

    return json.loads(os.environ["SPARK_STREAMS_PEER_TARGET"].replace(
        "{worker}", os.environ.get("PYTEST_XDIST_WORKER", "main")))
"""
# Replaces the sdist's pytest settings (which ask for pytest-dotenv and `-n auto`).
PYTEST_INI = """[pytest]
addopts =
markers =
    skip_profile(profile): skip test for the given profile
filterwarnings =
    ignore::DeprecationWarning
"""


def suite(dbt_spark_version: str) -> Path:
    """dbt-spark's source distribution, downloaded and unpacked once per version."""
    unpacked = PEER / f"dbt_spark-{dbt_spark_version}"
    if (unpacked / "pytest.ini").exists():
        return unpacked
    dist = PEER / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:",
         "--no-deps", f"dbt-spark=={dbt_spark_version}", "-d", str(dist)],
        check=True,
    )  # fmt: skip
    with tarfile.open(dist / f"dbt_spark-{dbt_spark_version}.tar.gz") as archive:
        archive.extractall(PEER, filter="data")
    profiles = unpacked / "tests" / "functional" / "fixtures" / "profiles.py"
    profiles.write_text(profiles.read_text() + PROFILE_HOOK)
    (unpacked / "pytest.ini").write_text(PYTEST_INI)
    return unpacked


def session_target() -> dict:
    """A spark_streams session with a warehouse and metastore per pytest worker (an embedded
    Derby metastore takes one JVM), tuned for tiny tables as this project's own tests are."""
    spark = PEER / "spark-{worker}"
    target = {
        "type": "spark_streams",
        "method": "session",
        "host": "localhost",
        "schema": "peer",
        "threads": 1,
        "warehouse_dir": f"{spark}/warehouse",
        "metastore_dir": f"{spark}/metastore",
        "jvm_log": f"{spark}/spark-jvm.log",
        "shuffle_partitions": 1,
        "driver_memory": "2g",
        "server_side_parameters": {
            "spark.sql.codegen.wholeStage": "false",
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
            "spark.sql.adaptive.enabled": "false",
        },
    }
    if os.environ.get("SPARK_STREAMS_JARS_DIR"):
        target["jars_dir"] = os.environ["SPARK_STREAMS_JARS_DIR"]
    return target


def main(extra: list[str]) -> int:
    tests = suite(version("dbt-spark"))
    env = {
        # dbt-spark's fixtures module builds a Databricks URL at import; no test here uses it.
        "DBT_DATABRICKS_HOST_NAME": "unused.invalid",
        **os.environ,
        "SPARK_STREAMS_PEER_TARGET": json.dumps(session_target()),
    }
    deselect = [arg for test in DESELECTED for arg in ("--deselect", test)]
    for test, reason in DESELECTED.items():
        print(f"deselected: {test} ({reason})")
    command = [
        sys.executable, "-m", "pytest", "tests/functional", "--profile", "spark_session",
        "-p", "no:cacheprovider", "-n", "2", "--dist", "loadscope", *deselect, *extra,
    ]  # fmt: skip
    return subprocess.run(command, cwd=tests, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
