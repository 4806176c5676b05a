"""Pay a new machine's one-time start costs before the test workers start (`make warm`).

The first embedded Spark start on a machine resolves the Delta jars from Maven Central and
caches them (session/jvm/jar_cache.py), and trains a class-data-sharing archive of the classes
a session loads (session/jvm/cds.py) in the background. Under `make functional` two workers
start at once: one resolves while the other waits, and the trainer then competes with both for
the two cores. This starts one session the way the tests' sessions start (the same jars, so the
same archive key), stops it, and waits for the trainer to store the archive; on a machine that
has both already it starts nothing and says so.

Usage: scripts/warm_start.py
"""

import os
import sys
import tempfile
import time
from pathlib import Path

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.session.embedded import start_embedded_session
from dbt.adapters.spark_streams.session.embedded_confs import (
    fast_start_for,
    session_confs,
    spark_home,
)
from dbt.adapters.spark_streams.session.jvm import cds, jar_cache

TRAINING_TIMEOUT_S = 15 * 60


def credentials(home: Path) -> SparkStreamsCredentials:
    """A session profile whose JVM loads what the tests' sessions load (tests/conftest.py)."""
    profile = {
        "schema": "default",
        "method": "session",
        "warehouse_dir": str(home / "warehouse"),
        "metastore_dir": str(home / "metastore"),
        "jvm_log": str(home / "spark-jvm.log"),
    }
    if os.environ.get("SPARK_STREAMS_JARS_DIR"):
        profile["jars_dir"] = os.environ["SPARK_STREAMS_JARS_DIR"]
    return SparkStreamsCredentials.from_dict(profile)


def archive(creds: SparkStreamsCredentials) -> cds.Archive | None:
    """The archive slot of this profile's start, as it would start now; None without CDS."""
    if not cds.enabled():
        return None
    return cds.archive_for(session_confs(creds, fast_start_for(creds)), spark_home())


def ready(creds: SparkStreamsCredentials, slot: cds.Archive | None) -> bool:
    """Whether a start needs nothing more: its jars are cached (or the profile's own) and its
    archive `slot` is stored, or will not be trained (no CDS, or a recent failure)."""
    aids = fast_start_for(creds)
    if aids.uses_jar_cache and not jar_cache.cached_jars(creds.delta_package):
        return False
    return slot is None or (not cds.needs_training(slot) and not cds.training(slot))


def wait_for_training(slot: cds.Archive) -> str:
    """Wait for the trainer the start began; what became of its archive."""
    cds.wait_for_trainers(TRAINING_TIMEOUT_S)
    if slot.path.is_file():
        return f"archive {slot.path} stored"
    return f"no archive stored (its trainer's log: {slot.log})"


def main() -> int:
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="spark-streams-warm-") as folder:
        creds = credentials(Path(folder))
        if ready(creds, slot := archive(creds)):
            if slot is None:
                print("make warm: the Delta jars are in place already (class-data sharing is off)")
            else:
                print("make warm: the Delta jars and the CDS archive are in place already")
            return 0
        start_embedded_session(creds).stop()
        started = time.monotonic() - began
        slot = archive(creds)
        outcome = wait_for_training(slot) if slot is not None else "no CDS archive here"
    print(
        f"make warm: Spark started in {started:.0f} s (the Delta jars cached), "
        f"{outcome}; {time.monotonic() - began:.0f} s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
