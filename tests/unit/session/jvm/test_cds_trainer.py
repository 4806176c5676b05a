"""The class-data-sharing archive's trainer: the confs it trains with, what it leaves in place
after a good or a bad dump, and the work folders it cleans up."""

import json
import os
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.spark_streams.session import cds_trainer, embedded_confs
from dbt.adapters.spark_streams.session.jvm import cds
from tests.unit.session.jvm.fakes import CONFS


def test_the_trainer_keeps_the_class_path_and_moves_the_catalog(tmp_path: Path) -> None:
    confs = {
        **CONFS,
        "spark.driver.extraJavaOptions": "-Dderby.system.home=/p/ms -Duser.opt='a b' "
        "-XX:SharedArchiveFile=/old.jsa",
    }
    trained = cds_trainer.trainer_confs(
        confs, tmp_path / "work", tmp_path / "work" / "classes.jsa"
    )
    assert trained["spark.jars"] == CONFS["spark.jars"]
    assert trained["spark.driver.extraClassPath"] == CONFS["spark.driver.extraClassPath"]
    assert trained["spark.sql.warehouse.dir"] == str(tmp_path / "work" / "warehouse")
    assert trained["spark.hadoop.javax.jdo.option.ConnectionURL"].startswith(
        f"jdbc:derby:;databaseName={tmp_path / 'work' / 'metastore'}"
    )
    assert "spark.hadoop.javax.jdo.option.ConnectionDriverName" not in trained
    options = shlex.split(trained["spark.driver.extraJavaOptions"])
    assert "-Duser.opt=a b" in options
    assert f"-Dderby.system.home={tmp_path / 'work' / 'metastore'}" in options
    assert f"-XX:ArchiveClassesAtExit={tmp_path / 'work' / 'classes.jsa'}" in options
    assert not any(
        o.startswith(("-XX:SharedArchiveFile", "-Dderby.system.home=/p")) for o in options
    )


def request(archive: cds.Archive) -> Path:
    archive.folder.mkdir(parents=True, exist_ok=True)
    archive.request.write_text('{"confs": {}, "master": "local[1]"}')
    return archive.request


def test_a_good_dump_is_moved_into_place(jdk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def dump(request: Any, workdir: Path, dump_to: Path) -> None:
        dump_to.write_bytes(b"classes")
        (workdir / "info.json").write_text("{}")

    monkeypatch.setattr(cds_trainer, "_dump", dump)
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    (archive.folder / f".dump-{archive.key}-left-by-a-dead-trainer").mkdir(parents=True)
    assert cds_trainer.train(request(archive)) == 0
    assert archive.path.read_bytes() == b"classes"
    assert archive.info.exists()
    assert not list(archive.folder.glob(".dump-*"))


@pytest.mark.parametrize(
    ("how", "retry_after"),
    [("refused", cds.RETRY_AFTER_FAILURE_S), ("killed", cds.RETRY_AFTER_INTERRUPTION_S)],
)
def test_a_bad_dump_leaves_no_archive_and_a_marker(
    jdk: Path, monkeypatch: pytest.MonkeyPatch, how: str, retry_after: int
) -> None:
    def dump(request: Any, workdir: Path, dump_to: Path) -> str:
        dump_to.write_bytes(b"half")
        if how == "killed":
            raise cds_trainer.TrainingInterrupted("the trainer's JVM exited with -9")
        return "the archive failed the check"

    monkeypatch.setattr(cds_trainer, "_dump", dump)
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    assert cds_trainer.train(request(archive)) == 1
    assert not archive.path.exists()
    marker = json.loads(archive.failed.read_text())
    assert ("-9" if how == "killed" else "failed the check") in marker["reason"]
    assert marker["retry_after"] == retry_after
    assert not list(archive.folder.glob(".dump-*"))


def test_a_second_trainer_leaves_the_work_to_the_first(
    jdk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cds_trainer, "_dump", lambda *args: pytest.fail("trained twice"))
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    with cds.held(archive.lock):
        assert cds_trainer.train(request(archive)) == 0


def test_old_archives_beyond_the_newest_few_are_removed(jdk: Path) -> None:
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    archive.folder.mkdir(parents=True)
    for age in range(cds.KEEP_ARCHIVES + 2):
        old = archive.folder / f"old{age:02d}.jsa"
        old.write_bytes(b"a")
        stamp = time.time() - 1000 * (age + 1)
        os.utime(old, (stamp, stamp))
    cds_trainer._remove_leftovers(archive)
    assert sorted(p.name for p in archive.folder.glob("*.jsa")) == [
        f"old{age:02d}.jsa" for age in range(cds.KEEP_ARCHIVES)
    ]


def test_a_trainer_leaves_another_keys_trainer_at_work(jdk: Path) -> None:
    """Trainers of two keys run at once (two Spark installs starting, say): one's clean-up
    removes its own key's dead work folders and any too old to be alive, not the other's."""
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    archive.folder.mkdir(parents=True)
    own_dead = archive.folder / f".dump-{archive.key}-abc"
    other_at_work = archive.folder / ".dump-0123456789abcdef01234567-xyz"
    other_long_dead = archive.folder / ".dump-76543210fedcba9876543210-old"
    for folder in (own_dead, other_at_work, other_long_dead):
        (folder / "metastore").mkdir(parents=True)
    stamp = time.time() - 2 * cds.TRAIN_TIMEOUT_S - 60
    os.utime(other_long_dead, (stamp, stamp))
    cds_trainer._remove_leftovers(archive)
    assert [p.name for p in archive.folder.glob(".dump-*")] == [other_at_work.name]
