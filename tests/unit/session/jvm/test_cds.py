"""The class-data-sharing archive: keyed by JVM and class path, trained once, never fatal."""

import os
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
from tests.unit.session.jvm.fakes import CONFS, RELEASE, TRAINER


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
