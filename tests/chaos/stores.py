"""`make chaos --stores`: the cluster's tables on an object store and its catalog in PostgreSQL,
and the faults of those two.

S3Proxy (scripts/object_store.py) serves the bucket behind a fault proxy
(scripts/fault_proxy.py), which is the endpoint S3A is given; PostgreSQL
(scripts/postgres_metastore.py) holds the Hive metastore. All three live in <cluster>/stores.
The faults, each repaired after its hold:

- `store`: S3Proxy killed (SIGKILL) and started again on its port, with its objects;
- `slowdown`: every request answered `503 SlowDown`, the connections open at that moment reset;
- `stall`: requests read and never answered, longer than S3A's request timeout, so that its
  timeouts fire (S3A enforces at least 15 s);
- `postgres`: the PostgreSQL server killed (its postmaster SIGKILLed) and started again.
"""

import subprocess
import time
from pathlib import Path

from scripts import cluster, fault_proxy, object_store, postgres_metastore

KINDS = ("store", "slowdown", "stall", "postgres")
# S3A's timeouts at the minimum it enforces, so that a stall of a few more seconds fires them.
TIMEOUT = "15s"
S3A_CONFS = {
    "spark.hadoop.fs.s3a.connection.request.timeout": TIMEOUT,
    "spark.hadoop.fs.s3a.connection.timeout": TIMEOUT,
}
STALL_S = (16.0, 24.0)
RESTART_S = 60


def start(home: Path) -> cluster.Stores:
    """The store, its fault proxy and PostgreSQL in <home>/stores; what the cluster gets.
    (As root, PostgreSQL runs as `postgres`, which must reach its folder: a temporary
    folder's 700 is opened to 711 on the way.)"""
    for folder in (home.parent, home):
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(folder.stat().st_mode | 0o711)
    s3 = object_store.start(home / "stores" / "s3")
    port = fault_proxy.start(home / "stores" / "proxy", s3["port"])
    postgres = postgres_metastore.start(home / "stores" / "postgres")
    postgres_metastore.create_hive_tables(postgres)
    endpoint = f"http://127.0.0.1:{port}"
    return cluster.Stores(endpoint, s3["access_key"], s3["secret_key"], s3["bucket"], postgres)


def stop(home: Path) -> None:
    fault_proxy.stop(home / "stores" / "proxy")
    object_store.stop(home / "stores" / "s3")
    postgres_metastore.stop(home / "stores" / "postgres")


def inject(home: Path, kind: str) -> None:
    stores = home / "stores"
    if kind == "store":
        object_store.kill(stores / "s3")
    elif kind in ("slowdown", "stall"):
        fault_proxy.set_mode(stores / "proxy", kind)
    elif kind == "postgres":
        postgres_metastore.kill(stores / "postgres")
    else:
        raise ValueError(f"unknown fault {kind}")


def repair(home: Path, kind: str) -> None:
    stores = home / "stores"
    if kind == "store":
        object_store.restart(stores / "s3")
    elif kind in ("slowdown", "stall"):
        fault_proxy.set_mode(stores / "proxy", "pass")
    elif kind == "postgres":
        restart_postgres(stores / "postgres")


def restart_postgres(home: Path) -> None:
    """Start PostgreSQL again once the killed postmaster's backends have gone (they leave
    when they notice it gone; until then its shared memory is in use)."""
    deadline = time.monotonic() + RESTART_S
    while True:
        try:
            postgres_metastore.start(home)
            return
        except subprocess.CalledProcessError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
