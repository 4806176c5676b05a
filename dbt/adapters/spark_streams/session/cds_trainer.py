"""The CDS archive's trainer: the background process that runs a throwaway Spark session with
the same class path as the real starts, lets its JVM write the archive, checks it and renames
it into place (see jvm/cds.py for the archive itself).

    python -m dbt.adapters.spark_streams.session.cds_trainer <request.json>

It imports pyspark, which the archive's own module (run before every start) must not.
"""

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dbt.adapters.spark_streams.session.jvm.cds import (
    JAVA_OPTION_PREFIXES,
    KEEP_ARCHIVES,
    RETRY_AFTER_FAILURE_S,
    RETRY_AFTER_INTERRUPTION_S,
    TRAIN_TIMEOUT_S,
    Archive,
    forget,
    held,
    verify,
)

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


def _remove_leftovers(archive: Archive) -> None:
    """Work folders of trainers that died, and all but the newest archives. The lock held is
    this key's, so only this key's folders are surely dead; another key's trainer may be at
    work in its own (removing it took its catalog from under it), unless the folder is older
    than a trainer may run."""
    dead_before = time.time() - 2 * TRAIN_TIMEOUT_S
    for leftover in archive.folder.glob(".dump-*"):
        if leftover.name.startswith(_workdir_prefix(archive)) or _mtime(leftover) < dead_before:
            shutil.rmtree(leftover, ignore_errors=True)
    archives = sorted(archive.folder.glob("*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in archives[KEEP_ARCHIVES:]:
        old.unlink(missing_ok=True)
        old.with_suffix(".json").unlink(missing_ok=True)


def _workdir_prefix(archive: Archive) -> str:
    return f".dump-{archive.key}-"


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return time.time()


def train(request_file: Path) -> int:
    """The trainer's work: 0 when the archive is in place (or another trainer is at it)."""
    request = json.loads(request_file.read_text())
    key = request_file.name.removesuffix(".request.json")
    archive = Archive(key, request_file.parent)
    with held(archive.lock) as handle:
        if handle is None or archive.path.exists():
            return 0
        _remove_leftovers(archive)
        with contextlib.suppress(OSError):
            os.nice(10)
        workdir = Path(tempfile.mkdtemp(prefix=_workdir_prefix(archive), dir=archive.folder))
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
