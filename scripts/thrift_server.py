"""A Spark Thrift Server on this machine, for dbt-spark's `thrift` method: the server PySpark's
wheel ships (spark-hive-thriftserver, class HiveThriftServer2), started with spark-submit on a
local master, Delta configured as the embedded session configures it, its metastore embedded
Derby in <dir>/metastore (the server is the only process that opens it), on loopback.

    python scripts/thrift_server.py start <dir>   # prints the profile's host and port
    python scripts/thrift_server.py stop <dir>

`start(home, server=CONNECT)` starts PySpark's Spark Connect server instead, with the same
confs, for a side-by-side of the two methods (bench/methods.py).

Delta's jars go on the driver's class path as well as `spark.jars`: the server resolves the
`delta` data source when it starts, before jars added at run time are seen (without them:
`DATA_SOURCE_NOT_FOUND: delta`), and opens a network metastore, whose JDBC driver goes there
too. Of the resolved set only Delta's own jars go there: the whole set put another Jackson
ahead of Spark's.
"""

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyspark

from dbt.adapters.spark_streams.credentials import DEFAULT_JVM_OPTIONS, SparkStreamsCredentials
from dbt.adapters.spark_streams.session.embedded_confs import session_confs

SPARK_HOME = Path(pyspark.__file__).parent
SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
CONNECT = "org.apache.spark.sql.connect.service.SparkConnectServer"
STATE = "thrift-server.json"
STARTUP_SECONDS = 300
# Delta's own jars as the jar cache (io.delta_delta-spark_...) or Maven names them
DELTA_JAR = re.compile(r"/(io\.delta_)?delta-[a-z-]+[_-][0-9][^/]*\.jar$")
JVM_OPTIONS = DEFAULT_JVM_OPTIONS + " -XX:+UseSerialGC"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_confs(home: Path, port: int, profile: dict | None = None) -> dict[str, str]:
    """The server's confs: the embedded session's for a warehouse and metastore in <home>
    (or `profile`'s keys), Delta's jars on the driver's class path, the port on loopback."""
    creds = SparkStreamsCredentials.from_dict(
        {
            "schema": "default",
            "warehouse_dir": str(home / "warehouse"),
            "metastore_dir": str(home / "metastore"),
            "shuffle_partitions": 2,
            "driver_memory": "1g",
            "jvm_options": JVM_OPTIONS,
            **(profile or {}),
        }
    )
    confs = session_confs(creds)
    jars = [jar for jar in confs.get("spark.jars", "").split(",") if DELTA_JAR.search(jar)]
    if not jars:
        raise RuntimeError(
            "No Delta jars on this machine yet: run `make warm` (or `make jars` and set "
            "jars_dir) first; the Thrift Server needs them on its class path at start."
        )
    # the metastore's JDBC driver too: the server opens the metastore as it starts
    driver = [creds.metastore_driver_jar] if creds.metastore_driver_jar else []
    return {
        **confs,
        "spark.app.name": "dbt-spark-streams-thrift",
        "spark.master": "local[2]",
        "spark.driver.extraClassPath": ":".join([*jars, *driver]),
        "spark.hadoop.hive.server2.thrift.port": str(port),
        "spark.hadoop.hive.server2.thrift.bind.host": "127.0.0.1",
        "spark.hadoop.hive.server2.transport.mode": "binary",
        # A folder per client session, as Hive's default: each session's close deletes its
        # folder, and the embedded session's one shared folder (which it never closes) was then
        # deleted under other sessions opening at once ("Couldn't create directory").
        "spark.hadoop.hive.downloaded.resources.dir": str(
            home / "hive_resources" / "${hive.session.id}_resources"
        ),
    }


def start(home: Path, profile: dict | None = None, server: str = SERVER) -> dict:
    """Start the server (or, with server=CONNECT, a Spark Connect server); its pid and port go
    to <home>/thrift-server.json (and are returned)."""
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    properties = home / "thrift-server.conf"
    properties.touch(mode=0o600)
    confs = server_confs(home, port, profile)
    if server == CONNECT:
        confs = {
            **confs,
            "spark.connect.grpc.binding.port": str(port),
            "spark.connect.grpc.binding.address": "127.0.0.1",
        }
    properties.write_text("".join(f"{key}={value}\n" for key, value in confs.items()))
    command = [
        str(SPARK_HOME / "bin" / "spark-submit"), "--properties-file", str(properties),
        "--class", server, "spark-internal",
    ]  # fmt: skip
    if server == SERVER:
        command += [
            "--hiveconf", f"hive.server2.thrift.port={port}",
            "--hiveconf", "hive.server2.thrift.bind.host=127.0.0.1",
        ]  # fmt: skip
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOG_DIR": str(home / "logs")}
    with (home / "thrift-server.log").open("w") as log:
        process = subprocess.Popen(command, cwd=home, stdout=log, stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True)  # fmt: skip
    state = {"pid": process.pid, "port": port}
    (home / STATE).write_text(json.dumps(state))
    _wait_for_port(home, process, port)
    return state


def stop(home: Path) -> None:
    state_file = home / STATE
    if not state_file.exists():
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(json.loads(state_file.read_text())["pid"], signal.SIGTERM)
    state_file.unlink()


def kill(home: Path) -> None:
    """End the server at once (SIGKILL), as a crashed server ends."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(json.loads((home / STATE).read_text())["pid"], signal.SIGKILL)


def kill_on_commit(home: Path, log: Path, version: int) -> threading.Event:
    """Watch a Delta table's log and SIGKILL the server in <home> the moment its commit
    `version` exists (Delta writes its checksum file, and the server its reply, only after
    that); the event is set once the server is killed."""
    fired = threading.Event()
    commit = log / f"{version:020d}.json"

    def watch() -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if commit.exists():
                kill(home)
                fired.set()
                return
            time.sleep(0.002)

    threading.Thread(target=watch, daemon=True).start()
    return fired


def cpu_seconds(home: Path) -> float:
    """The CPU time the server in <home> (its process group) has used so far."""
    group, ticks = json.loads((home / STATE).read_text())["pid"], 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group:  # pgrp; utime and stime follow at 11 and 12
                ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def wait_until_idle(home: Path, quiet: float = 3, timeout: float = 180) -> None:
    """Wait until the server in <home> has run nothing for `quiet` seconds (under a tenth of a
    core). A client killed mid-run leaves its statements to the server, which cancels their
    jobs as it closes the session; one between its jobs (a commit) runs to its end, and a next
    run started beside it could meet it at a table's commit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        used = cpu_seconds(home)
        time.sleep(quiet)
        if cpu_seconds(home) - used < 0.1 * quiet:
            return
    raise RuntimeError(f"the Thrift Server in {home} is still busy after {timeout:.0f} s")


def _wait_for_port(home: Path, process: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(1)
    log = (home / "thrift-server.log").read_text()[-4000:]
    raise RuntimeError(f"the Thrift Server is not listening on port {port}:\n{log}")


if __name__ == "__main__":
    action, folder = sys.argv[1], Path(sys.argv[2]).resolve()
    if action == "start":
        started = start(folder)
        print(
            "Spark Thrift Server up. Profile: method: thrift, host: 127.0.0.1, "
            f"port: {started['port']}, user: {os.environ.get('USER', 'dbt')}"
        )
    elif action == "stop":
        stop(folder)
    else:
        sys.exit("usage: python scripts/thrift_server.py start|stop <dir>")
