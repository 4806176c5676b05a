"""The class-data-sharing archive: keyed by JVM and class path, trained once, never fatal."""

import json
import os
import shlex
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.session import cds_trainer, embedded_confs
from dbt.adapters.spark_streams.session import embedded as embedded_session
from dbt.adapters.spark_streams.session.jvm import cds, jar_cache

RELEASE = 'IMPLEMENTOR="Debian"\nJAVA_VERSION="17.0.15"\n'
TRAINER = ["/usr/bin/python3", "-m", embedded_confs.CDS_TRAINER]


@pytest.fixture
def jdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake JDK and Spark home, and an empty cache: every file the key reads, none real."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "lib" / "server").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\nexit 0\n")
    (home / "bin" / "java").chmod(0o755)
    (home / "lib" / "server" / "libjvm.so").write_bytes(b"jvm")
    (home / "release").write_text(RELEASE)
    spark = tmp_path / "spark"
    (spark / "jars").mkdir(parents=True)
    (spark / "jars" / "spark-core_2.13-4.2.0.jar").write_bytes(b"core")
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setattr(embedded_confs, "spark_home", lambda: spark)
    monkeypatch.setenv(jar_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    for name in (cds.CDS_ENV, jar_cache.FAST_START_ENV, *cds.LAUNCHER_ENV):
        monkeypatch.delenv(name, raising=False)
    return home


CONFS = {
    "spark.jars": "/cache/jars/a.jar,/cache/jars/b.jar",
    "spark.driver.extraJavaOptions": "-Dderby.system.home=/p/metastore",
    "spark.sql.warehouse.dir": "/p/spark-warehouse",
    "spark.hadoop.javax.jdo.option.ConnectionURL": "jdbc:derby://localhost:1527/ms",
    "spark.hadoop.javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.ClientDriver",
    "spark.driver.extraClassPath": "/jars/derbyclient.jar",
}


def key(confs: dict[str, str] = CONFS) -> str:
    archive = cds.archive_for(confs, embedded_confs.spark_home())
    assert archive is not None
    return archive.key


def test_java_versions_are_read_from_the_release_file() -> None:
    assert cds.java_major(RELEASE) == 17
    assert cds.java_major('JAVA_VERSION="1.8.0_402"') == 8
    assert cds.java_major('JAVA_VERSION="21"') == 21
    assert cds.java_major("") is None


def test_the_key_is_stable_and_follows_the_jvm_and_the_class_path(
    jdk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = key()
    assert key() == first
    assert key({**CONFS, "spark.sql.shuffle.partitions": "8"}) == first
    assert key({**CONFS, "spark.jars": "/cache/jars/a.jar"}) != first
    assert key({**CONFS, "spark.driver.extraClassPath": "/other.jar"}) != first
    (tmp_path / "spark" / "jars" / "spark-core_2.13-4.2.0.jar").write_bytes(b"patched core")
    second = key()
    assert second != first
    (jdk / "release").write_text(RELEASE.replace("17.0.15", "17.0.16"))
    third = key()
    assert third != second
    monkeypatch.setenv("SPARK_DIST_CLASSPATH", "/hadoop/*")
    assert key() != third


def test_no_archive_below_java_13_or_without_java(
    jdk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (jdk / "release").write_text('JAVA_VERSION="11.0.2"')
    assert cds.archive_for(CONFS, embedded_confs.spark_home()) is None
    monkeypatch.setenv("JAVA_HOME", "/nowhere")
    monkeypatch.setenv("PATH", "/nowhere")
    assert cds.archive_for(CONFS, embedded_confs.spark_home()) is None


def test_switches(jdk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cds.enabled()
    monkeypatch.setenv(cds.CDS_ENV, "0")
    assert not cds.enabled()
    monkeypatch.delenv(cds.CDS_ENV)
    monkeypatch.setenv(jar_cache.FAST_START_ENV, "off")
    assert not cds.enabled()


def test_a_start_maps_the_archive_only_once_it_is_in_place(jdk: Path) -> None:
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    assert cds.start_options(archive) == []
    archive.folder.mkdir(parents=True)
    archive.path.write_bytes(b"archive")
    options = cds.start_options(archive)
    assert options == [f"-XX:SharedArchiveFile={archive.path}"]
    confs = cds.with_java_options(CONFS, options)
    assert confs["spark.driver.extraJavaOptions"] == (
        f"-Dderby.system.home=/p/metastore -XX:SharedArchiveFile={archive.path}"
    )
    assert cds.with_java_options({}, options)["spark.driver.extraJavaOptions"] == options[0]
    assert cds.with_java_options(CONFS, []) == CONFS


def test_an_archive_used_by_a_start_outlives_newer_unused_ones(jdk: Path) -> None:
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    archive.folder.mkdir(parents=True)
    archive.path.write_bytes(b"archive")
    long_ago = time.time() - 100_000
    os.utime(archive.path, (long_ago, long_ago))
    for age in range(cds.KEEP_ARCHIVES):  # newer than it, none of them used since
        newer = archive.folder / f"newer{age:02d}.jsa"
        newer.write_bytes(b"a")
        stamp = long_ago + 1000 * (age + 1)
        os.utime(newer, (stamp, stamp))
    assert cds.start_options(archive)
    cds_trainer._remove_leftovers(archive)
    assert archive.path.exists()
    assert len(list(archive.folder.glob("*.jsa"))) == cds.KEEP_ARCHIVES


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


def test_training_is_needed_once_and_not_while_a_trainer_holds_the_lock(jdk: Path) -> None:
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    assert cds.needs_training(archive)
    with cds.held(archive.lock) as handle:
        assert handle is not None
        assert cds.training(archive)
        assert not cds.needs_training(archive)
    assert not cds.training(archive)
    archive.path.write_bytes(b"archive")
    assert not cds.needs_training(archive)


def test_a_failure_holds_training_off_for_a_day(jdk: Path) -> None:
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    archive.folder.mkdir(parents=True)
    archive.path.write_bytes(b"archive")
    cds.forget(archive, "it crashed")
    assert not archive.path.exists()
    assert "it crashed" in archive.failed.read_text()
    assert not cds.needs_training(archive)
    old = time.time() - cds.RETRY_AFTER_FAILURE_S - 60
    os.utime(archive.failed, (old, old))
    assert cds.needs_training(archive)


def test_an_interrupted_training_is_retried_within_the_hour(jdk: Path) -> None:
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    cds.forget(archive, "killed", cds.RETRY_AFTER_INTERRUPTION_S)
    assert not cds.needs_training(archive)
    old = time.time() - cds.RETRY_AFTER_INTERRUPTION_S - 60
    os.utime(archive.failed, (old, old))
    assert cds.needs_training(archive)
    archive.failed.write_text("not json")  # a marker from elsewhere: the full day
    assert not cds.needs_training(archive)


def test_a_trainer_is_started_detached_with_the_request(
    jdk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[dict[str, Any]] = []

    def popen(command: list[str], **kwargs: Any) -> SimpleNamespace:
        started.append({"command": command, **kwargs})
        return SimpleNamespace()

    monkeypatch.setattr(cds.subprocess, "Popen", popen)
    monkeypatch.setattr(cds, "_trainers", [])
    archive = cds.archive_for(CONFS, embedded_confs.spark_home())
    assert archive is not None
    assert cds.train_in_background(archive, CONFS, "local[*]", TRAINER)
    assert started[0]["command"] == [*TRAINER, str(archive.request)]
    assert started[0]["start_new_session"] is True
    assert started[0]["cwd"] == archive.folder
    assert '"master": "local[*]"' in archive.request.read_text()
    archive.path.write_bytes(b"archive")
    assert not cds.train_in_background(archive, CONFS, "local[*]", TRAINER)
    assert len(started) == 1


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


def test_verify_is_the_exit_code_of_java_xshare_on(tmp_path: Path) -> None:
    java = tmp_path / "java"
    java.write_text('#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\nexit 1\n')
    java.chmod(0o755)
    assert "refused it (1)" in str(cds.verify(java, tmp_path / "a.jsa", "/x.jar:/y.jar"))
    args = (tmp_path / "args").read_text().split()
    assert args == [
        "-Xshare:on",
        "-XX:+VerifySharedSpaces",
        f"-XX:SharedArchiveFile={tmp_path / 'a.jsa'}",
        "-cp",
        "/x.jar:/y.jar",
        "-version",
    ]
    java.write_text("#!/bin/sh\nexit 0\n")
    assert cds.verify(java, tmp_path / "a.jsa", "/x.jar") is None
    assert "did not run" in str(cds.verify(tmp_path / "no-java", tmp_path / "a.jsa", "/x.jar"))


class FakeSession:
    version = "4.2.0"

    def __init__(self) -> None:
        self.sparkContext = SimpleNamespace(setLogLevel=lambda level: None)


def archive_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> tuple[SparkStreamsCredentials, cds.Archive]:
    """Credentials of a project in `tmp_path` and its start's archive, holding `content`;
    nothing runs after a start."""
    monkeypatch.setattr(embedded_confs, "project_dir", lambda: tmp_path)
    monkeypatch.setattr(embedded_session, "_after_start", lambda *args: None)
    creds = SparkStreamsCredentials.from_dict({"schema": "s"})
    archive = cds.archive_for(embedded_confs.session_confs(creds), embedded_confs.spark_home())
    assert archive is not None
    archive.folder.mkdir(parents=True)
    archive.path.write_bytes(content)
    return creds, archive


def test_a_start_the_archive_breaks_is_retried_without_it_and_the_archive_dropped(
    jdk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    creds, archive = archive_in_place(tmp_path, monkeypatch, b"truncated")
    starts: list[str] = []

    def start(creds: Any, confs: dict[str, str], aids: Any) -> FakeSession:
        starts.append(confs["spark.driver.extraJavaOptions"])
        if "SharedArchiveFile" in starts[-1]:
            raise FailedToConnectError("JAVA_GATEWAY_EXITED")
        return FakeSession()

    monkeypatch.setattr(embedded_session, "_start", start)
    assert isinstance(embedded_session._build_session(creds), FakeSession)
    assert ["SharedArchiveFile" in options for options in starts] == [True, False]
    assert not archive.path.exists()
    assert "JAVA_GATEWAY_EXITED" in archive.failed.read_text()


def test_a_start_that_fails_without_an_archive_is_not_retried(
    jdk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded_confs, "project_dir", lambda: tmp_path)
    calls: list[int] = []

    def start(creds: Any, confs: dict[str, str], aids: Any) -> FakeSession:
        calls.append(1)
        raise FailedToConnectError("unresolved dependency")

    monkeypatch.setattr(embedded_session, "_start", start)
    with pytest.raises(FailedToConnectError, match="unresolved dependency"):
        embedded_session._build_session(SparkStreamsCredentials.from_dict({"schema": "s"}))
    assert calls == [1]


def test_no_archive_options_when_switched_off(
    jdk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    creds, _ = archive_in_place(tmp_path, monkeypatch, b"archive")
    seen: list[str] = []
    monkeypatch.setattr(
        embedded_session,
        "_start",
        lambda creds, confs, aids: (
            seen.append(confs["spark.driver.extraJavaOptions"]) or FakeSession()
        ),
    )
    monkeypatch.setenv(cds.CDS_ENV, "0")
    embedded_session._build_session(creds)
    monkeypatch.delenv(cds.CDS_ENV)
    embedded_session._build_session(creds)
    assert ["SharedArchiveFile" in options for options in seen] == [False, True]
