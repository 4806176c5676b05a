"""A JVM class-data-sharing (AppCDS) archive of the classes a Spark session loads.

A Spark start with Delta and Hive loads about 20,000 classes; parsing and verifying them is
most of the JVM's work before the first query. Java 13+ can write the classes a run loaded into
an archive (`-XX:ArchiveClassesAtExit`) that later JVMs map instead (`-XX:SharedArchiveFile`).

The archive is only valid for the exact JVM and class path it was written with, so it is keyed
by both (the java binary and its release, Spark's jars, the extra class path, the session's jars,
the environment the launcher reads). After a start finds no archive for its key, it starts a
trainer in the background (`python -m dbt.adapters.spark_streams.session.jvm.cds <request>`, at low
priority): a throwaway session in a temporary warehouse and metastore, with the same class path,
runs the statements dbt runs (Delta DDL, MERGE, history, the Hive catalog) and exits, and the
JVM writes the archive. The trainer checks it with `java -Xshare:on -XX:+VerifySharedSpaces`
(a truncated archive can crash a JVM) and only then renames it into place. One trainer runs per
key at a time (a file lock); a trainer that fails leaves a marker, and none is retried for a day
(an hour when its JVM was killed).

A start with an archive adds `-XX:SharedArchiveFile`. If that start fails, the embedded session
starts again without it and the archive is dropped (see session/embedded.py): the archive can
make a start faster, never make it fail.
"""

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
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
KEEP_ARCHIVES = 3
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


def spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home()).resolve()


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


def archive_for(confs: Mapping[str, str]) -> Archive | None:
    """The archive slot of this start's JVM and class path; None when CDS cannot apply."""
    java = java_binary()
    if java is None:
        return None
    major = java_major(java_release(java))
    if major is None or major < 13:
        return None
    digest = json.dumps(fingerprint(confs, java, spark_home()), sort_keys=True)
    key = hashlib.sha256(digest.encode()).hexdigest()[:24]
    return Archive(key, cache_root() / "cds")


def start_options(archive: Archive) -> list[str]:
    """JVM options for a start: the archive when one is ready, else none."""
    return [f"-XX:SharedArchiveFile={archive.path}"] if archive.path.is_file() else []


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
def _held(lock: Path) -> Iterator[IO[str] | None]:
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
    with _held(archive.lock) as handle:
        return handle is None


def needs_training(archive: Archive) -> bool:
    """No archive yet, no trainer at work, and no failure within the last day."""
    return not (archive.path.exists() or _failed_recently(archive) or training(archive))


def train_in_background(archive: Archive, confs: Mapping[str, str], master: str) -> bool:
    """Start a detached trainer for `archive` unless one is not needed; whether one started.

    The request (the session's confs and master) goes to a file; the trainer runs at low
    priority in its own session, so dbt neither waits for it nor stops it on Ctrl-C.
    """
    if not needs_training(archive):
        return False
    archive.folder.mkdir(parents=True, exist_ok=True)
    _write_atomically(archive.request, json.dumps({"confs": dict(confs), "master": master}))
    with open(archive.log, "ab") as log:
        trainer = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dbt.adapters.spark_streams.session.jvm.cds",
                str(archive.request),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
            # Not the project's folder: a test's may be deleted while the trainer runs.
            cwd=archive.folder,
        )
    _trainers.append(trainer)
    return True


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


# The trainer: what runs in the background process.

WARMUP_STATEMENTS = (
    "create database if not exists cds_warmup",
    "show databases",
    "create table cds_warmup.source (id bigint, name string, amount decimal(12, 2), "
    "updated_at timestamp) using delta tblproperties (delta.enableChangeDataFeed = true)",
    "insert into cds_warmup.source values (1, 'a', 1.50, current_timestamp()), "
    "(2, 'b', 2.50, current_timestamp())",
    "update cds_warmup.source set amount = amount + 1 where id = 1",
    "delete from cds_warmup.source where id = 2",
    "create or replace view cds_warmup.source_view as select * from cds_warmup.source",
    "create table cds_warmup.target using delta as select * from cds_warmup.source_view",
    "merge into cds_warmup.target t using (select * from (select *, row_number() over "
    "(partition by id order by _commit_version desc) as change_rank "
    "from table_changes('cds_warmup.source', 0) where _change_type != 'update_preimage') "
    "where change_rank = 1) s on t.id = s.id "
    "when matched and s._change_type = 'delete' then delete "
    "when matched then update set t.amount = s.amount "
    "when not matched and s._change_type != 'delete' then insert (id, name, amount, updated_at) "
    "values (s.id, s.name, s.amount, s.updated_at)",
    "insert overwrite cds_warmup.target select * from cds_warmup.source",
    "describe history cds_warmup.source",
    "describe table extended cds_warmup.source",
    "describe detail cds_warmup.target",
    "show tblproperties cds_warmup.target",
    "show table extended in cds_warmup like '*'",
    "show tables in cds_warmup",
    "select count(*), sum(amount), max(updated_at) from cds_warmup.target group by name",
    "drop view cds_warmup.source_view",
    "drop table cds_warmup.target",
    "drop table cds_warmup.source",
    "drop database cds_warmup cascade",
)


def trainer_confs(confs: Mapping[str, str], workdir: Path, dump_to: Path) -> dict[str, str]:
    """The requesting session's confs, pointed at a throwaway catalog and told to dump.

    The class path (Spark's jars, spark.jars, the extra class path) stays the same, so the
    archive fits the real starts; the warehouse and an embedded Derby metastore move to
    `workdir`, so the trainer never touches a project's catalog or a shared metastore.
    """
    trained = dict(confs)
    trained["spark.app.name"] = "dbt-spark-streams-cds-trainer"
    trained["spark.sql.warehouse.dir"] = str(workdir / "warehouse")
    metastore = workdir / "metastore"
    trained["spark.hadoop.javax.jdo.option.ConnectionURL"] = (
        f"jdbc:derby:;databaseName={metastore / 'metastore_db'};create=true"
    )
    trained.pop("spark.hadoop.javax.jdo.option.ConnectionDriverName", None)
    kept = [
        option
        for option in shlex.split(trained.get("spark.driver.extraJavaOptions", ""))
        if not option.startswith(JAVA_OPTION_PREFIXES)
    ]
    dump = [
        f"-Dderby.system.home={metastore}",
        f"-XX:ArchiveClassesAtExit={dump_to}",
        "-Xlog:cds=off",
        "-Xlog:cds+dynamic=off",
    ]
    trained["spark.driver.extraJavaOptions"] = shlex.join(kept + dump)
    return trained


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


def _remove_leftovers(archive: Archive) -> None:
    """Work folders of trainers that died (the lock is ours: no trainer is running), and all
    but the newest archives."""
    for leftover in archive.folder.glob(".dump-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    archives = sorted(archive.folder.glob("*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in archives[KEEP_ARCHIVES:]:
        old.unlink(missing_ok=True)
        old.with_suffix(".json").unlink(missing_ok=True)


def train(request_file: Path) -> int:
    """The trainer's work: 0 when the archive is in place (or another trainer is at it)."""
    request = json.loads(request_file.read_text())
    key = request_file.name.removesuffix(".request.json")
    archive = Archive(key, request_file.parent)
    with _held(archive.lock) as handle:
        if handle is None or archive.path.exists():
            return 0
        _remove_leftovers(archive)
        with contextlib.suppress(OSError):
            os.nice(10)
        workdir = Path(tempfile.mkdtemp(prefix=".dump-", dir=archive.folder))
        dump_to = workdir / "classes.jsa"
        retry_after: float = RETRY_AFTER_FAILURE_S
        try:
            reason = _dump(request, workdir, dump_to)
            if reason is None:
                os.replace(workdir / "info.json", archive.info)
                os.replace(dump_to, archive.path)
                archive.failed.unlink(missing_ok=True)
                print(f"archive ready: {archive.path}", flush=True)
                return 0
        except Exception as exc:  # killed, or the session did not start: try again sooner
            reason = f"the trainer was interrupted: {exc!r}"
            retry_after = RETRY_AFTER_INTERRUPTION_S
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"no archive: {reason}", flush=True)
    forget(archive, reason, retry_after)
    return 1


class TrainingInterrupted(Exception):
    """The trainer's JVM was killed or did not exit: nothing is known about the archive."""


def _dump(request: Mapping[str, Any], workdir: Path, dump_to: Path) -> str | None:
    """Run the throwaway session, let its JVM write `dump_to`, check it; None when it is good."""
    from pyspark.sql import SparkSession

    confs = trainer_confs(request["confs"], workdir, dump_to)
    builder = SparkSession.builder.master(request["master"])
    for name, value in confs.items():
        builder = builder.config(name, value)
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    class_path = jvm.java.lang.System.getProperty("java.class.path")
    java = Path(jvm.java.lang.System.getProperty("java.home")) / "bin" / "java"
    gateway_process = spark.sparkContext._gateway.proc  # type: ignore[union-attr]
    for statement in WARMUP_STATEMENTS:
        try:
            spark.sql(statement).collect()
        except Exception as exc:  # the archive is still worth having
            print(f"warm-up statement failed: {statement}: {exc}", flush=True)
    spark.stop()
    # The gateway JVM exits when its stdin closes, and writes the archive on its way out.
    gateway_process.stdin.close()
    try:
        gateway_process.wait(timeout=TRAIN_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        gateway_process.kill()
        raise TrainingInterrupted("the trainer's JVM did not exit in time") from exc
    if gateway_process.returncode != 0:
        raise TrainingInterrupted(f"the trainer's JVM exited with {gateway_process.returncode}")
    if not dump_to.is_file():
        return f"the trainer's JVM exited ({gateway_process.returncode}) without an archive"
    refused = verify(java, dump_to, class_path)
    if refused:
        return refused
    info = {"java": str(java), "class_path": class_path, "confs": confs}
    (workdir / "info.json").write_text(json.dumps(info, indent=1))
    return None


if __name__ == "__main__":
    sys.exit(train(Path(sys.argv[1])))
