"""Run a command with an object store and a PostgreSQL metastore running beside it: S3Proxy
(scripts/object_store.py) and PostgreSQL (scripts/postgres_metastore.py) started in <dir>, their
settings in <dir>/object-store.json and <dir>/postgres.json (named to the command by
SPARK_STREAMS_STORES=<dir>), both stopped when the command ends.

    python scripts/with_stores.py <dir> -- pytest tests/store

The tests' profile (tests/conftest.py) then keeps every table at s3a:// and every catalog in
PostgreSQL: one metastore database per test worker (metastore_gw0, ...), as one team's
processes would each have their own catalog on a shared server.
"""

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import object_store
import postgres_metastore

# One per test worker, and one each for the processes tests/store/test_two_processes.py and
# test_crash_on_store.py start.
WORKER_DATABASES = (
    *(f"metastore_gw{n}" for n in range(4)),
    "metastore_master",
    "metastore_procs",
    "metastore_crash",
)


def profile_env(store: dict, postgres: dict) -> dict[str, str]:
    """The variables a profile's `env_var()` reads the stores' settings from (the demo's
    `store` target): the endpoint, keys and bucket, the metastore's URL, login and driver."""
    return {
        "STREAMS_S3_ENDPOINT": store["endpoint"],
        "STREAMS_S3_BUCKET": store["bucket"],
        "STREAMS_S3_ACCESS_KEY": store["access_key"],
        "STREAMS_S3_SECRET_KEY": store["secret_key"],
        "STREAMS_METASTORE_URL": postgres["url"],
        "STREAMS_METASTORE_USER": postgres["user"],
        "STREAMS_METASTORE_PASSWORD": postgres["password"],
        "STREAMS_METASTORE_DRIVER_JAR": postgres["driver_jar"],
    }


def main() -> int:
    home = Path(sys.argv[1]).resolve()
    command = sys.argv[sys.argv.index("--") + 1 :]
    home.mkdir(parents=True, exist_ok=True)
    try:
        store = object_store.start(home / "s3")
        postgres = postgres_metastore.start(home / "postgres", databases=WORKER_DATABASES)
        print(f"with_stores: S3Proxy on {store['endpoint']}, PostgreSQL on {postgres['port']}")
        env = {**os.environ, "SPARK_STREAMS_STORES": str(home), **profile_env(store, postgres)}
        return subprocess.run(command, env=env, check=False).returncode
    finally:
        postgres_metastore.stop(home / "postgres")
        object_store.stop(home / "s3")


if __name__ == "__main__":
    sys.exit(main())
