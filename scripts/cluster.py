"""A Spark cluster of separate processes on this machine, to point a `method: connect` profile
at and for the cluster test: a standalone master, two workers (one core each), a Spark Connect
server with Delta attached to the master, and a Derby network server holding the Hive
metastore. Every process sees one warehouse folder (or, for `make chaos --stores`, one object
store and a PostgreSQL metastore instead). (The cluster test starts one worker with
both cores: one executor JVM instead of two, for the same statements.)

    python scripts/cluster.py start <dir>   # prints the profile's host, token file and CA
    python scripts/cluster.py stop <dir>

The Connect server gets the confs the embedded session would (Delta's catalog and jars, the
metastore, the warehouse), so tables built over it read the same as tables built locally. It
requires a token, as a shared cluster does: Spark's own pre-shared token check
(`spark.connect.authenticate.token`, handed over in its environment variable so that it never
shows in a process listing), with a new random token per start in <dir>/token (mode 600). A
TLS-terminating proxy (scripts/tls_proxy.py; Spark's server has no TLS of its own) serves the
same server over TLS, with a certificate from a throw-away CA (<dir>/tls/ca.pem).
"""

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pyspark

from dbt.adapters.spark_streams.credentials import DEFAULT_JVM_OPTIONS, SparkStreamsCredentials
from dbt.adapters.spark_streams.session.embedded import session_confs
from scripts.tls_proxy import throwaway_ca

REPO = Path(__file__).resolve().parents[1]
METASTORE_SERVER = REPO / "scripts" / "metastore-server.sh"
DERBY_CLIENT = REPO / ".jars" / "derby-server" / "derbyclient-10.16.1.1.jar"
SPARK_HOME = Path(pyspark.__file__).parent
CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"
TLS_PROXY = REPO / "scripts" / "tls_proxy.py"
TOKEN_VARIABLE = "SPARK_CONNECT_AUTHENTICATE_TOKEN"
STATE = "cluster.json"
WORKERS = 2
CORES = 2  # the cores the workers offer in all, shared out among them
STARTUP_SECONDS = 300
# Every JVM of the cluster gets the embedded session's default options (the JIT's quick tier:
# on two cores the full JIT's compiler threads took about half of a test JVM's CPU time) and
# the serial collector, which spends less CPU than G1 on these small heaps (the cluster test:
# 216 instead of 239 CPU-seconds, side by side).
LOCAL_JVM_OPTIONS = DEFAULT_JVM_OPTIONS + " -XX:+UseSerialGC"


@dataclass(frozen=True)
class Stores:
    """An object store and a PostgreSQL metastore for the cluster (scripts/object_store.py and
    scripts/postgres_metastore.py): where S3A reaches the store, its keys and bucket, and
    postgres_metastore.start's state (the metastore's URL, login and driver jar)."""

    endpoint: str
    access_key: str
    secret_key: str
    bucket: str
    metastore: dict

    def profile(self) -> dict:
        """The profile keys that keep the tables on the store and the catalog in PostgreSQL."""
        return {
            "warehouse_dir": f"s3a://{self.bucket}/warehouse",
            "metastore_url": self.metastore["url"],
            "metastore_user": self.metastore["user"],
            "metastore_password": self.metastore["password"],
            "metastore_driver_jar": self.metastore["driver_jar"],
            "server_side_parameters": {
                "spark.hadoop.fs.s3a.endpoint": self.endpoint,
                "spark.hadoop.fs.s3a.access.key": self.access_key,
                "spark.hadoop.fs.s3a.secret.key": self.secret_key,
                # S3Proxy answers a folder marker's copy without an ETag (object_store.py)
                "spark.hadoop.fs.s3a.change.detection.version.required": "false",
            },
        }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return int(probe.getsockname()[1])


def start(
    home: Path,
    server_confs: dict[str, str] | None = None,
    warehouse_mib: int | None = None,
    workers: int = WORKERS,
    stores: Stores | None = None,
) -> dict:
    """Start every process (the metastore first, the Connect server and its TLS proxy last);
    their pids and ports go to <home>/cluster.json for `stop`. `server_confs` are added to the
    Connect server's (the cluster test's interpreted expressions). With `warehouse_mib` the
    warehouse is a tmpfs of that size (root only), so that a test can fill it. The CORES are
    shared out among `workers` workers, each running one executor. With `stores`, the
    warehouse is on that object store and the metastore in that PostgreSQL (no Derby)."""
    home.mkdir(parents=True, exist_ok=True)
    ports = {name: free_port() for name in ("derby", "master", "master_ui", "connect", "tls")}
    state: dict = {"ports": ports, "pids": {}, "workers": workers, "stores": bool(stores)}
    if warehouse_mib:
        _mount_warehouse(home, warehouse_mib)
        state["mounted"] = True
    if not stores:
        start_metastore(home, state)
    master = f"spark://127.0.0.1:{ports['master']}"
    try:
        state["pids"]["master"] = _spawn(home, "master", _master_command(ports))
        _wait_for_port(home, "master", ports["master"])
        cores = CORES // workers
        state["worker_commands"] = [
            _worker_command(home, n, master, cores) for n in range(workers)
        ]
        for worker in range(workers):
            start_worker(home, worker, state, wait=False)
        _wait_for_workers(home, ports["master_ui"], workers)
        confs = _connect_confs(home, ports, master, server_confs, cores, stores)
        state["connect_command"] = _connect_command(home, confs)
        _new_token(home)
        start_connect(home, state)
        state["pids"]["tls"] = _spawn(home, "tls", _proxy_command(home, ports))
        _wait_for_port(home, "tls", ports["tls"])
    finally:
        (home / STATE).write_text(json.dumps(state))
    return {**state, **profile_keys(home, state)}


def profile_keys(home: Path, state: dict) -> dict:
    """Where a profile points: the plain and the TLS address, the token and the CA file."""
    return {
        "host": f"sc://localhost:{state['ports']['connect']}",
        "tls_host": f"sc://localhost:{state['ports']['tls']}/;use_ssl=true",
        "token": (home / "token").read_text(),
        "ca_cert": str(home / "tls" / "ca.pem"),
    }


def start_connect(home: Path, state: dict | None = None) -> None:
    """(Re)start the Connect server with the cluster's token and wait until it listens."""
    state = state or json.loads((home / STATE).read_text())
    token = {TOKEN_VARIABLE: (home / "token").read_text()}
    state["pids"]["connect"] = _spawn(home, "connect", state["connect_command"], token)
    _wait_for_port(home, "connect", state["ports"]["connect"])
    (home / STATE).write_text(json.dumps(state))


def start_worker(home: Path, worker: int, state: dict | None = None, wait: bool = True) -> None:
    """(Re)start worker `worker`; with `wait`, until the master counts every worker alive."""
    state = state or json.loads((home / STATE).read_text())
    name = f"worker-{worker}"
    state["pids"][name] = _spawn(home, name, state["worker_commands"][worker])
    (home / STATE).write_text(json.dumps(state))
    if wait:
        _wait_for_workers(home, state["ports"]["master_ui"], state["workers"])


def kill_worker(home: Path, worker: int) -> None:
    """End worker `worker` and its executor at once (SIGKILL), as a lost machine ends."""
    state = json.loads((home / STATE).read_text())
    with contextlib.suppress(ProcessLookupError):
        os.killpg(state["pids"][f"worker-{worker}"], signal.SIGKILL)


def start_metastore(home: Path, state: dict | None = None) -> None:
    """(Re)start the Derby network server that holds the metastore, and wait until it answers."""
    state = state or json.loads((home / STATE).read_text())
    derby = str(state["ports"]["derby"])
    subprocess.run(["bash", str(METASTORE_SERVER), "start", str(home / "metastore"), derby],
                   check=True, timeout=600, capture_output=True)  # fmt: skip


def kill_metastore(home: Path) -> None:
    """End the Derby network server at once (SIGKILL): the metastore stops answering."""
    with contextlib.suppress(ProcessLookupError, FileNotFoundError, ValueError):
        os.kill(int((home / "metastore" / "derby-server.pid").read_text()), signal.SIGKILL)


def _mount_warehouse(home: Path, mib: int) -> None:
    warehouse = home / "warehouse"
    warehouse.mkdir(exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mib}m", "tmpfs", str(warehouse)],
                   check=True, capture_output=True)  # fmt: skip


def kill_connect(home: Path) -> None:
    """End the Connect server at once (SIGKILL), as a crashed or evicted server ends."""
    state = json.loads((home / STATE).read_text())
    with contextlib.suppress(ProcessLookupError):
        os.killpg(state["pids"]["connect"], signal.SIGKILL)
    _wait_for_port(home, "connect", state["ports"]["connect"], listening=False)


def stop(home: Path) -> None:
    """Stop what `start` started, the proxy and the Connect server first."""
    state_file = home / STATE
    if not state_file.exists():
        return
    state = json.loads(state_file.read_text())
    for pid in reversed(list(state["pids"].values())):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
    if not state.get("stores"):
        derby = str(state["ports"]["derby"])
        subprocess.run(["bash", str(METASTORE_SERVER), "stop", str(home / "metastore"), derby],
                       check=False, timeout=120)  # fmt: skip
    if state.get("mounted"):
        time.sleep(2)  # the JVMs close their files
        subprocess.run(["umount", "-l", str(home / "warehouse")], check=False)
    state_file.unlink()


def _new_token(home: Path) -> None:
    """A random token for this start, readable by its owner only."""
    token_file = home / "token"
    token_file.touch(mode=0o600)
    token_file.write_text(secrets.token_urlsafe(24))


def _proxy_command(home: Path, ports: dict) -> list[str]:
    files = throwaway_ca(home / "tls")
    return [sys.executable, str(TLS_PROXY), str(ports["tls"]), str(ports["connect"]),
            str(files["server.pem"]), str(files["server.key"])]  # fmt: skip


def _master_command(ports: dict) -> list[str]:
    return [str(SPARK_HOME / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1", "--port", str(ports["master"]),
            "--webui-port", str(ports["master_ui"])]  # fmt: skip


def _worker_command(home: Path, worker: int, master: str, cores: int) -> list[str]:
    return [str(SPARK_HOME / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker",
            "--host", "127.0.0.1", "--cores", str(cores), "--memory", "1g",
            "--work-dir", str(home / f"worker-{worker}"), "--webui-port", str(free_port()),
            master]  # fmt: skip


def _connect_confs(home: Path, ports: dict, master: str, server_confs: dict[str, str] | None,
                   cores: int, stores: Stores | None) -> dict[str, str]:  # fmt: skip
    """The Connect server's confs: the embedded session's for a shared metastore (Delta, its
    jars, the warehouse, the metastore: Derby's network server, or the `stores`)."""
    profile = {
        "schema": "default",
        "warehouse_dir": str(home / "warehouse"),
        "metastore_dir": str(home / "metastore"),
        "metastore_url": f"jdbc:derby://localhost:{ports['derby']}/metastore_db;create=true",
        "metastore_driver_jar": str(DERBY_CLIENT),
        "shuffle_partitions": 2,
        "driver_memory": "1g",
        "jvm_options": LOCAL_JVM_OPTIONS,
        **(stores.profile() if stores else {}),
    }
    return {
        **session_confs(SparkStreamsCredentials.from_dict(profile)),
        "spark.app.name": "dbt-spark-streams-connect",
        "spark.master": master,
        "spark.connect.grpc.binding.port": str(ports["connect"]),
        "spark.executor.memory": "512m",
        "spark.executor.extraJavaOptions": LOCAL_JVM_OPTIONS,
        "spark.executor.cores": str(cores),
        "spark.cores.max": str(CORES),
        **(server_confs or {}),
    }


def _connect_command(home: Path, confs: dict[str, str]) -> list[str]:
    """spark-submit of pyspark's Spark Connect server on the master, its confs in a properties
    file of the owner's only (the store's and the metastore's secrets never in a process
    listing)."""
    properties = home / "connect.conf"
    properties.touch(mode=0o600)
    properties.write_text("".join(f"{key}={value}\n" for key, value in confs.items()))
    return [str(SPARK_HOME / "bin" / "spark-submit"), "--master", confs["spark.master"],
            "--properties-file", str(properties), "--class", CONNECT_SERVER,
            "spark-internal"]  # fmt: skip


def _spawn(home: Path, name: str, command: list[str], extra_env: dict | None = None) -> int:
    """A process in its own group (so `stop` ends its JVM too), output to <name>.log."""
    env = {**os.environ, **(extra_env or {}), "SPARK_HOME": str(SPARK_HOME),
           "SPARK_LOG_DIR": str(home / "logs"), "SPARK_WORKER_DIR": str(home / "work"),
           "SPARK_NO_DAEMONIZE": "1",
           "SPARK_DAEMON_JAVA_OPTS": LOCAL_JVM_OPTIONS}  # fmt: skip
    with (home / f"{name}.log").open("w") as log:
        process = subprocess.Popen(command, cwd=home, stdout=log, stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True)  # fmt: skip
    return process.pid


def _wait_for_port(home: Path, name: str, port: int, *, listening: bool = True) -> None:
    """Until `port` listens (or, with listening=False, no longer does)."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if (probe.connect_ex(("localhost", port)) == 0) == listening:
                return
        time.sleep(1)
    log = (home / f"{name}.log").read_text()[-4000:]
    state = "listening" if listening else "still listening"
    raise RuntimeError(f"{name} is not {state} on port {port}:\n{log}")


def _wait_for_workers(home: Path, ui_port: int, workers: int) -> None:
    """Until the master counts every worker alive (its web UI's JSON)."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as page:
                if json.load(page).get("aliveworkers", 0) >= workers:
                    return
        except OSError:
            pass
        time.sleep(1)
    logs = "".join((home / f"worker-{i}.log").read_text()[-2000:] for i in range(workers))
    raise RuntimeError(f"the workers did not register with the master:\n{logs}")


if __name__ == "__main__":
    action, folder = sys.argv[1], Path(sys.argv[2]).resolve()
    if action == "start":
        started = start(folder)
        print(
            "Spark cluster up. Profile: method: connect, "
            "token: \"{{ env_var('SPARK_CONNECT_TOKEN') }}\" and either\n"
            f"  host: {started['host']}\n"
            f'  host: "{started["tls_host"]}", ca_cert: {started["ca_cert"]}\n'
            f"with: export SPARK_CONNECT_TOKEN=$(cat {folder / 'token'})"
        )
    elif action == "stop":
        stop(folder)
    else:
        sys.exit("usage: python scripts/cluster.py start|stop <dir>")
