"""A JVM class-data-sharing (AppCDS) archive of the classes a Spark session loads.

A Spark start with Delta and Hive loads about 20,000 classes; parsing and verifying them is
most of the JVM's work before the first query. Java 13+ can write the classes a run loaded into
an archive (`-XX:ArchiveClassesAtExit`) that later JVMs map instead (`-XX:SharedArchiveFile`).

The archive is only valid for the exact JVM and class path it was written with, so it is keyed
by both (the java binary and its release, Spark's jars, the extra class path, the session's jars,
the environment the launcher reads). After a start finds no archive for its key, it starts a
trainer in the background (session/cds_trainer.py, at low priority): a throwaway session in a
temporary warehouse and metastore, with the same class path, runs the statements dbt runs
(Delta DDL, MERGE, history, the Hive catalog) and exits, and the JVM writes the archive. The
trainer checks it with `java -Xshare:on -XX:+VerifySharedSpaces` (a truncated archive can crash
a JVM) and only then renames it into place. One trainer runs per key at a time (a file lock); a
trainer that fails leaves a marker, and none is retried for a day (an hour when its JVM was
killed).

A start with an archive adds `-XX:SharedArchiveFile`. If that start fails, the embedded session
starts again without it and the archive is dropped (see session/embedded.py): the archive can
make a start faster, never make it fail.
"""

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from dbt.adapters.spark_streams.session.jvm.jar_cache import cache_root, fast_start_enabled

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no archive, a plain start
    fcntl = None  # type: ignore[assignment]

CDS_ENV = "SPARK_STREAMS_CDS"
# Bumped when the fingerprint or the trainer's statements change, so old archives are not used.
FORMAT = 1
RETRY_AFTER_FAILURE_S = 24 * 3600
# A trainer whose JVM was killed (or timed out) says nothing about the archive: sooner.
RETRY_AFTER_INTERRUPTION_S = 3600
TRAIN_TIMEOUT_S = 1800
# One archive per distinct start (a Spark install and its jars): a project's tests, its
# object-store profile and the compatibility matrix's six Spark installs are each one, and an
# archive evicted is trained again (a minute or two of a core) at its next start. About 230 MB
# each. The ones kept are the ones used last.
KEEP_ARCHIVES = 10
JAVA_OPTION_PREFIXES = (
    "-XX:SharedArchiveFile=",
    "-XX:ArchiveClassesAtExit=",
    "-Dderby.system.home=",
)
# What Spark's launcher reads to build the driver's class path (besides SPARK_HOME).
LAUNCHER_ENV = (
    "SPARK_CLASSPATH",
    "SPARK_DIST_CLASSPATH",
    "SPARK_PREPEND_CLASSES",
    "SPARK_CONF_DIR",
    "HADOOP_CONF_DIR",
    "YARN_CONF_DIR",
    "SPARK_SCALA_VERSION",
)
_trainers: list[subprocess.Popen[bytes]] = []


def enabled() -> bool:
    """Off with SPARK_STREAMS_CDS=0 (or SPARK_STREAMS_FAST_START=0), and where no file locks."""
    if fcntl is None or not fast_start_enabled():
        return False
    return os.environ.get(CDS_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass(frozen=True)
class Archive:
    """The files of one key in `<cache>/cds/`."""

    key: str
    folder: Path

    def file(self, suffix: str) -> Path:
        return self.folder / f"{self.key}{suffix}"

    @property
    def path(self) -> Path:
        """The archive itself, present only once it passed the check."""
        return self.file(".jsa")

    @property
    def lock(self) -> Path:
        return self.file(".lock")

    @property
    def failed(self) -> Path:
        return self.file(".failed")

    @property
    def request(self) -> Path:
        return self.file(".request.json")

    @property
    def log(self) -> Path:
        return self.file(".log")

    @property
    def info(self) -> Path:
        return self.file(".json")


def java_binary() -> Path | None:
    """The java Spark's launcher runs: JAVA_HOME's, else the one on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return (Path(java_home) / "bin" / "java").resolve()
    found = shutil.which("java")
    return Path(found).resolve() if found else None


def java_release(java: Path) -> str:
    """The JDK's `release` file (its exact version), or '' where there is none."""
    try:
        return (java.parent.parent / "release").read_text()
    except OSError:
        return ""


def java_major(release: str) -> int | None:
    """17 for JAVA_VERSION="17.0.15", 8 for "1.8.0_402"; None when unknown."""
    found = re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', release, re.MULTILINE)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def _stat(path: Path) -> list[Any]:
    try:
        info = path.stat()
    except OSError:
        return [str(path), None]
    return [str(path), info.st_size, info.st_mtime_ns]


def _paths(value: str, separator: str) -> list[list[Any]]:
    return [_stat(Path(part.removeprefix("file://"))) for part in value.split(separator) if part]


def fingerprint(confs: Mapping[str, str], java: Path, home: Path) -> dict[str, Any]:
    """Everything the archive's validity depends on: the JVM and the class path, file by file."""
    jars_dir = home / "jars"
    spark_jars = sorted(jars_dir.glob("*.jar")) if jars_dir.is_dir() else []
    return {
        "format": FORMAT,
        "java": [_stat(java), java_release(java), _stat(java.parent.parent / "lib")],
        "libjvm": [_stat(path) for path in sorted(java.parent.parent.glob("lib/*/libjvm.so"))],
        "spark_home": str(home),
        "spark_jars": [[jar.name, *_stat(jar)[1:]] for jar in spark_jars],
        "spark_conf_dir": _stat(home / "conf"),
        "extra_class_path": _paths(confs.get("spark.driver.extraClassPath", ""), os.pathsep),
        "jars": _paths(confs.get("spark.jars", ""), ","),
        "packages": confs.get("spark.jars.packages", ""),
        "env": {name: os.environ.get(name) for name in LAUNCHER_ENV},
    }


def archive_for(confs: Mapping[str, str], spark_home: Path) -> Archive | None:
    """The archive slot of this start's JVM and class path (Spark's jars are under
    `spark_home`); None when CDS cannot apply."""
    java = java_binary()
    if java is None:
        return None
    major = java_major(java_release(java))
    if major is None or major < 13:
        return None
    digest = json.dumps(fingerprint(confs, java, spark_home), sort_keys=True)
    key = hashlib.sha256(digest.encode()).hexdigest()[:24]
    return Archive(key, cache_root() / "cds")


def start_options(archive: Archive) -> list[str]:
    """JVM options for a start: the archive when one is ready, else none. A used archive is
    marked used (its time), so the ones kept are the ones in use, not the newest made."""
    if not archive.path.is_file():
        return []
    with contextlib.suppress(OSError):
        os.utime(archive.path)
    return [f"-XX:SharedArchiveFile={archive.path}"]


def with_java_options(confs: Mapping[str, str], options: list[str]) -> dict[str, str]:
    """`confs` with `options` appended to the driver's extraJavaOptions."""
    merged = dict(confs)
    if options:
        current = merged.get("spark.driver.extraJavaOptions", "")
        merged["spark.driver.extraJavaOptions"] = " ".join([current, *options]).strip()
    return merged


def _failed_recently(archive: Archive) -> bool:
    """Whether the marker of a failed training is younger than the wait it asks for."""
    try:
        age = time.time() - archive.failed.stat().st_mtime
        wait = json.loads(archive.failed.read_text()).get("retry_after", RETRY_AFTER_FAILURE_S)
    except OSError:
        return False
    except (ValueError, AttributeError):
        wait = RETRY_AFTER_FAILURE_S
    return age < wait


@contextlib.contextmanager
def held(lock: Path) -> Iterator[IO[str] | None]:
    """The trainer's lock held (yields the open file), or None when another process holds it."""
    assert fcntl is not None
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield None
            return
        try:
            yield handle
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def training(archive: Archive) -> bool:
    """Whether a trainer holds this key's lock right now."""
    with held(archive.lock) as handle:
        return handle is None


def needs_training(archive: Archive) -> bool:
    """No archive yet, no trainer at work, and no failure within the last day."""
    return not (archive.path.exists() or _failed_recently(archive) or training(archive))


def train_in_background(
    archive: Archive, confs: Mapping[str, str], master: str, trainer: list[str]
) -> bool:
    """Start a detached trainer for `archive` unless one is not needed; whether one started.

    The request (the session's confs and master) goes to a file, whose path is the last
    argument of the `trainer` command; the trainer runs at low priority in its own session,
    so dbt neither waits for it nor stops it on Ctrl-C.
    """
    if not needs_training(archive):
        return False
    archive.folder.mkdir(parents=True, exist_ok=True)
    _write_atomically(archive.request, json.dumps({"confs": dict(confs), "master": master}))
    with open(archive.log, "ab") as log:
        process = subprocess.Popen(
            [*trainer, str(archive.request)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
            # Not the project's folder: a test's may be deleted while the trainer runs.
            cwd=archive.folder,
        )
    _trainers.append(process)
    return True


def wait_for_trainers(timeout: float = TRAIN_TIMEOUT_S) -> None:
    """Wait for the trainers this process started (a tool that pays a machine's first start
    up front, scripts/warm_start.py, waits; dbt never does)."""
    for process in _trainers:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout)


def forget(archive: Archive, reason: str, retry_after: float = RETRY_AFTER_FAILURE_S) -> None:
    """Drop an archive (a start failed with it, or its training did), and train none for this
    key for `retry_after` seconds (a day by default)."""
    with contextlib.suppress(OSError):
        archive.path.unlink()
    with contextlib.suppress(OSError):
        archive.folder.mkdir(parents=True, exist_ok=True)
        marker = {"reason": reason, "retry_after": retry_after, "at": time.ctime()}
        archive.failed.write_text(json.dumps(marker))


def _write_atomically(path: Path, text: str) -> None:
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    staging.write_text(text)
    os.replace(staging, path)


def verify(java: Path, archive: Path, class_path: str) -> str | None:
    """None when a JVM with this class path maps the archive and its checksums match, else
    what went wrong."""
    check = [
        str(java),
        "-Xshare:on",
        "-XX:+VerifySharedSpaces",
        f"-XX:SharedArchiveFile={archive}",
        "-cp",
        class_path,
        "-version",
    ]
    try:
        done = subprocess.run(check, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`java -Xshare:on` did not run: {exc}"
    if done.returncode == 0:
        return None
    said = " ".join((done.stdout + done.stderr).split()[-40:])
    return f"`java -Xshare:on -XX:+VerifySharedSpaces` refused it ({done.returncode}): {said}"
