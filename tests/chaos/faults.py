"""The faults `make chaos` injects into a cluster of scripts/cluster.py, and their repairs.

Each fault is what a cluster's operator sees go wrong: a worker (and its executor) killed, the
Spark Connect server killed, the dbt process SIGKILLed while the server runs its statement,
the metastore's server killed, the warehouse's file system full. The repair is what the
operator (or the cluster manager) does next: start the process again, free the disk. The dbt
process is gone for good; the server may go on with the statement it sent.
"""

import contextlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from scripts import cluster
from tests.chaos import stores

KINDS = ("worker", "server", "client", "metastore", "disk")
# With the tables on an object store and the catalog in PostgreSQL (chaos --stores): their
# faults, and the cluster's that still apply (Derby's and the local disk's do not).
STORE_KINDS = (*stores.KINDS, "worker", "server", "client")
FILLER = ".chaos-filler"


@dataclass(frozen=True)
class Injection:
    """One planned fault: injected `delay` seconds after the run's `after_starts`-th stream
    model build started, repaired `hold` seconds later."""

    kind: str
    after_starts: int
    delay: float
    hold: float
    worker: int = 0


def inject(home: Path, injection: Injection, dbt: subprocess.Popen) -> None:
    """The fault, now."""
    if injection.kind == "worker":
        cluster.kill_worker(home, injection.worker)
    elif injection.kind == "server":
        cluster.kill_connect(home)
    elif injection.kind == "client":
        with contextlib.suppress(ProcessLookupError):
            os.killpg(dbt.pid, 9)
    elif injection.kind == "metastore":
        cluster.kill_metastore(home)
    elif injection.kind == "disk":
        fill(home / "warehouse")
    elif injection.kind in stores.KINDS:
        stores.inject(home, injection.kind)
    else:
        raise ValueError(f"unknown fault {injection.kind}")


def repair(home: Path, injection: Injection) -> None:
    """What brings the cluster back after the fault."""
    if injection.kind == "worker":
        cluster.start_worker(home, injection.worker)
    elif injection.kind == "server":
        cluster.start_connect(home)
    elif injection.kind == "metastore":
        cluster.start_metastore(home)
    elif injection.kind == "disk":
        (home / "warehouse" / FILLER).unlink(missing_ok=True)
    elif injection.kind in stores.KINDS:
        stores.repair(home, injection.kind)


def fill(warehouse: Path) -> None:
    """Take every free byte of the warehouse's file system (a tmpfs of cluster.start's
    `warehouse_mib`), so that the next write there fails with no space left."""
    free = shutil.disk_usage(warehouse).free
    with (warehouse / FILLER).open("ab") as filler, contextlib.suppress(OSError):
        os.posix_fallocate(filler.fileno(), filler.tell(), free)
    # what fallocate could not take (block rounding), a write takes
    with (warehouse / FILLER).open("ab") as filler, contextlib.suppress(OSError):
        while shutil.disk_usage(warehouse).free > 0:
            filler.write(b"\0" * 65536)
            filler.flush()


def wait_gone(process: subprocess.Popen, timeout: float) -> None:
    """The run's end; a run still going after `timeout` is killed (and the chaos run says so
    through the run's output, which then lacks dbt's summary)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout)
    if process.poll() is None:
        os.killpg(process.pid, 9)
        process.wait()
