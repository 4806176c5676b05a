"""Run a command with a Spark Thrift Server beside it, as dbt-spark's `thrift` method reaches a
cluster: PostgreSQL holding the metastore (scripts/postgres_metastore.py), the Thrift Server
(scripts/thrift_server.py) over it and a warehouse folder in <dir>/warehouse, its settings
named to the command by SPARK_STREAMS_THRIFT=<dir>; both stopped when the command ends.

    python scripts/with_thrift.py <dir> -- pytest tests/functional/streams/test_changes.py

The tests' profile (tests/conftest.py) then reaches Spark over thrift, while each test process's
own embedded session (which sets sources up and reads results) shares the server's catalog and
warehouse.
"""

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbt.adapters.spark_streams.credentials import ALL_FILES_IN_CRC
from scripts import postgres_metastore, thrift_server

DATABASE = "metastore_thrift"
# The server keeps Delta's own default for the checksum's copy of a table's file list, as a
# user's server does; the sessions dbt opens on it leave the copy out (credentials.py).
USERS_SERVER = {"server_side_parameters": {ALL_FILES_IN_CRC: "true"}}


def server_profile(home: Path, postgres: dict, server: bool = False) -> dict:
    """The profile keys the server and the test processes share: warehouse and metastore
    (and for the `server`, Delta's defaults where a user's server keeps them)."""
    return {
        **(USERS_SERVER if server else {}),
        "warehouse_dir": str(home / "warehouse"),
        "metastore_url": postgres["url"].rsplit("/", 1)[0] + f"/{DATABASE}",
        "metastore_user": postgres["user"],
        "metastore_password": postgres["password"],
        "metastore_driver_jar": postgres["driver_jar"],
    }


def main() -> int:
    home = Path(sys.argv[1]).resolve()
    command = sys.argv[sys.argv.index("--") + 1 :]
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(home.stat().st_mode | 0o711)  # PostgreSQL's user reaches its folder
    try:
        postgres = postgres_metastore.start(home / "postgres", databases=(DATABASE,))
        profile = server_profile(home, postgres, server=True)
        postgres_metastore.create_hive_tables(postgres, profile["metastore_url"])
        server = thrift_server.start(home / "thrift", profile)
        print(f"with_thrift: Thrift Server on 127.0.0.1:{server['port']}, PostgreSQL on "
              f"{postgres['port']}")  # fmt: skip
        env = {**os.environ, "SPARK_STREAMS_THRIFT": str(home)}
        return subprocess.run(command, env=env, check=False).returncode
    finally:
        thrift_server.stop(home / "thrift")
        postgres_metastore.stop(home / "postgres")


if __name__ == "__main__":
    sys.exit(main())
