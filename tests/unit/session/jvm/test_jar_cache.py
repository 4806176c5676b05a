"""The Delta jar cache: keyed by coordinate, complete or ignored, safe to fill at once (no JVM)."""

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from dbt.adapters.spark_streams.credentials import DEFAULT_DELTA_PACKAGE, SparkStreamsCredentials
from dbt.adapters.spark_streams.session import embedded_confs
from dbt.adapters.spark_streams.session.embedded_confs import fast_start_for, session_confs
from dbt.adapters.spark_streams.session.jvm import jar_cache

DELTA = DEFAULT_DELTA_PACKAGE  # the build for the installed Spark: delta-spark_4.2_2.13 on 4.2
_, ARTIFACT, VERSION = DELTA.split(":")
MAIN_JAR = f"io.delta_{ARTIFACT}-{VERSION}.jar"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(jar_cache.CACHE_DIR_ENV, str(root))
    monkeypatch.delenv(jar_cache.FAST_START_ENV, raising=False)
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    monkeypatch.setattr(embedded_confs, "project_dir", lambda: tmp_path)
    return root


def ivy_jars(folder: Path, names: list[str]) -> list[Path]:
    """Jars as Spark's Ivy retrieval leaves them, each with distinct content."""
    folder.mkdir(parents=True, exist_ok=True)
    jars = []
    for index, name in enumerate(names):
        (folder / name).write_bytes(b"jar" * (index + 1))
        jars.append(folder / name)
    return jars


def credentials(**profile: object) -> SparkStreamsCredentials:
    return SparkStreamsCredentials.from_dict({"schema": "analytics", **profile})


def test_cache_root_follows_the_env_then_xdg_then_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(jar_cache.CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jar_cache.cache_root() == tmp_path / "xdg" / "dbt-spark-streams"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert jar_cache.cache_root() == tmp_path / "home" / ".cache" / "dbt-spark-streams"
    monkeypatch.setenv(jar_cache.CACHE_DIR_ENV, str(tmp_path / "mine"))
    assert jar_cache.cache_root() == tmp_path / "mine"


def test_each_coordinate_has_its_own_folder(cache: Path) -> None:
    assert jar_cache.entry_dir(DELTA) == cache / "jars" / f"io.delta_{ARTIFACT}_{VERSION}"
    assert jar_cache.entry_dir(DELTA) != jar_cache.entry_dir(DELTA.replace("4.4.0", "4.4.1"))
    many = ",".join(f"io.delta:delta-spark_4.2_2.13:4.{n}.0" for n in range(10))
    assert len(jar_cache.entry_dir(many).name) < 100
    assert jar_cache.entry_dir(many) != jar_cache.entry_dir(many + ",a:b:c")


def test_stored_jars_come_back_in_ivy_order_with_a_manifest(cache: Path, tmp_path: Path) -> None:
    names = [MAIN_JAR, "io.delta_delta-storage-4.4.0.jar", "com.a_b-1.0.jar"]
    stored = jar_cache.store(DELTA, ivy_jars(tmp_path / "ivy", names))
    folder = jar_cache.entry_dir(DELTA)
    assert stored == [folder / name for name in names]
    assert jar_cache.cached_jars(DELTA) == stored
    assert (folder / "com.a_b-1.0.jar").read_bytes() == b"jarjarjar"
    manifest = json.loads((folder / jar_cache.MANIFEST).read_text())
    assert manifest["coordinate"] == DELTA
    assert [entry["name"] for entry in manifest["jars"]] == names
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no staging left


def test_a_changed_coordinate_is_not_served_from_another_ones_folder(
    cache: Path, tmp_path: Path
) -> None:
    jar_cache.store(DELTA, ivy_jars(tmp_path / "ivy", [MAIN_JAR]))
    assert jar_cache.cached_jars(DELTA.replace("4.4.0", "4.4.1")) is None


@pytest.mark.parametrize(
    "damage",
    ["no manifest", "a jar missing", "a jar truncated", "manifest unreadable", "other coordinate"],
)
def test_a_broken_folder_is_ignored_and_replaced(cache: Path, tmp_path: Path, damage: str) -> None:
    jars = ivy_jars(tmp_path / "ivy", [MAIN_JAR, "x_y-1.jar"])
    jar_cache.store(DELTA, jars)
    folder = jar_cache.entry_dir(DELTA)
    manifest = folder / jar_cache.MANIFEST
    if damage == "no manifest":
        manifest.unlink()
    elif damage == "a jar missing":
        (folder / "x_y-1.jar").unlink()
    elif damage == "a jar truncated":
        (folder / "x_y-1.jar").write_bytes(b"j")
    elif damage == "manifest unreadable":
        manifest.write_text('{"version": 1, "coordinate"')
    else:
        manifest.write_text(manifest.read_text().replace(DELTA, "a:b:c"))
    assert jar_cache.cached_jars(DELTA) is None
    stored = jar_cache.store(DELTA, jars)
    assert jar_cache.cached_jars(DELTA) == stored
    assert (folder / "x_y-1.jar").read_bytes() == b"jarjar"


def test_what_lacks_the_coordinates_own_jar_is_not_stored(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="do not include"):
        jar_cache.store(DELTA, ivy_jars(tmp_path / "ivy", ["other_thing-1.0.jar"]))
    with pytest.raises(ValueError, match="not a group:artifact:version"):
        jar_cache.store("io.delta:delta-spark", ivy_jars(tmp_path / "ivy", [MAIN_JAR]))
    with pytest.raises(ValueError, match="repeat"):
        jar_cache.store(DELTA, [*ivy_jars(tmp_path / "a", [MAIN_JAR]), tmp_path / "b" / MAIN_JAR])
    assert not jar_cache.entry_dir(DELTA).exists()


def test_several_coordinates_need_all_their_jars(cache: Path, tmp_path: Path) -> None:
    both = f"{DELTA},org.example:extra_2.13:1.0"
    with pytest.raises(ValueError, match=r"extra_2\.13-1\.0\.jar"):
        jar_cache.store(both, ivy_jars(tmp_path / "ivy", [MAIN_JAR]))
    jars = ivy_jars(tmp_path / "ivy", [MAIN_JAR, "org.example_extra_2.13-1.0.jar"])
    assert len(jar_cache.store(both, jars)) == 2


def test_a_folder_stored_first_by_another_process_is_kept(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = jar_cache.store(DELTA, ivy_jars(tmp_path / "theirs", [MAIN_JAR]))
    # We read no complete folder before copying; by the time we rename, theirs is there.
    reads = iter([None])
    real_read = jar_cache.read_manifest
    monkeypatch.setattr(
        jar_cache, "read_manifest", lambda f, c: next(reads, None) or real_read(f, c)
    )
    ours = jar_cache.store(DELTA, ivy_jars(tmp_path / "ours", [MAIN_JAR, "x_y-1.jar"]))
    assert ours == theirs
    assert [p.name for p in jar_cache.entry_dir(DELTA).parent.iterdir()] == [
        jar_cache.entry_dir(DELTA).name
    ]


def _store_in_a_process(root: str, ivy: str, names: list[str]) -> None:
    os.environ[jar_cache.CACHE_DIR_ENV] = root
    jar_cache.store(DELTA, [Path(ivy) / name for name in names])


def test_processes_storing_at_once_leave_one_complete_folder(cache: Path, tmp_path: Path) -> None:
    names = [MAIN_JAR, *(f"g_a{n}-1.jar" for n in range(20))]
    ivy_jars(tmp_path / "ivy", names)
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(
            target=_store_in_a_process, args=(str(cache), str(tmp_path / "ivy"), names)
        )
        for _ in range(6)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0] * 6
    folder = jar_cache.entry_dir(DELTA)
    assert jar_cache.cached_jars(DELTA) == [folder / name for name in names]
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]


def _start_in_a_process(root: str, ivy: str, log: str) -> None:
    """What a start does about the jars: under the lock, resolve (slowly) unless cached."""
    os.environ[jar_cache.CACHE_DIR_ENV] = root
    with fast_start_for(credentials()).resolving():
        if jar_cache.cached_jars(DELTA):
            outcome = "cache"
        else:
            outcome = "resolved"
            time.sleep(0.5)
            jar_cache.store(DELTA, [Path(ivy) / MAIN_JAR])
    with open(log, "a") as out:
        out.write(outcome + "\n")


def test_processes_starting_at_once_resolve_once(cache: Path, tmp_path: Path) -> None:
    """On a new machine the test workers start together: one resolves, the rest use its cache
    (Ivy's downloads fail when processes fetch the same jar at once)."""
    ivy_jars(tmp_path / "ivy", [MAIN_JAR])
    log = tmp_path / "starts.log"
    context = multiprocessing.get_context("fork")
    args = (str(cache), str(tmp_path / "ivy"), str(log))
    workers = [context.Process(target=_start_in_a_process, args=args) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0] * 4
    assert sorted(log.read_text().split()) == ["cache", "cache", "cache", "resolved"]


def test_a_start_with_jars_or_a_filled_cache_takes_no_lock(cache: Path, tmp_path: Path) -> None:
    lock = jar_cache.entry_dir(DELTA).with_name(f".{jar_cache.entry_dir(DELTA).name}.lock")
    with fast_start_for(credentials(jars_dir="mine")).resolving():
        assert not lock.exists()
    with fast_start_for(credentials()).resolving():
        assert lock.exists()
    lock.unlink()
    jar_cache.store(DELTA, ivy_jars(tmp_path / "ivy", [MAIN_JAR]))
    with fast_start_for(credentials()).resolving():
        assert not lock.exists()


def test_stale_staging_folders_are_removed(cache: Path, tmp_path: Path) -> None:
    folder = jar_cache.entry_dir(DELTA)
    folder.parent.mkdir(parents=True)
    stale = folder.parent / f".{folder.name}.dead"
    fresh = folder.parent / f".{folder.name}.busy"
    stale.mkdir()
    fresh.mkdir()
    old = time.time() - 2 * jar_cache.STALE_STAGING_S
    os.utime(stale, (old, old))
    jar_cache.store(DELTA, ivy_jars(tmp_path / "ivy", [MAIN_JAR]))
    assert not stale.exists()
    assert fresh.exists()


def test_resolved_jars_are_read_from_file_urls() -> None:
    listed = "file:///root/.ivy2/jars/a.jar,file:///root/with%20space/b.jar,/plain/c.jar"
    assert jar_cache.resolved_jar_files(listed) == [
        Path("/root/.ivy2/jars/a.jar"),
        Path("/root/with space/b.jar"),
        Path("/plain/c.jar"),
    ]
    assert jar_cache.resolved_jar_files("") == []
    with pytest.raises(ValueError, match="not a local file"):
        jar_cache.resolved_jar_files("spark://host:1/jars/a.jar")


def test_the_cache_stays_out_when_switched_off_or_when_the_profile_resolves(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert jar_cache.applies({})
    assert not jar_cache.applies({"spark.jars.repositories": "https://mirror"})
    assert not jar_cache.applies({"spark.jars": "/x.jar"})
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--jars /x.jar pyspark-shell")
    assert not jar_cache.applies({})
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    monkeypatch.setenv(jar_cache.FAST_START_ENV, "0")
    assert not jar_cache.applies({})


def test_session_confs_use_the_cache_once_it_is_complete(cache: Path, tmp_path: Path) -> None:
    assert session_confs(credentials())["spark.jars.packages"] == DELTA
    stored = jar_cache.store(DELTA, ivy_jars(tmp_path / "ivy", [MAIN_JAR, "x_y-1.jar"]))
    confs = session_confs(credentials())
    assert "spark.jars.packages" not in confs
    assert confs["spark.jars"] == ",".join(str(jar) for jar in stored)
    other = session_confs(credentials(delta_package=DELTA.replace("4.4.0", "4.4.1")))
    assert other["spark.jars.packages"] == DELTA.replace("4.4.0", "4.4.1")


def test_jars_dir_and_the_old_start_win_over_the_cache(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jar_cache.store(DELTA, ivy_jars(tmp_path / "ivy", [MAIN_JAR]))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "d.jar").write_bytes(b"")
    assert session_confs(credentials(jars_dir="mine"))["spark.jars"] == str(
        tmp_path / "mine" / "d.jar"
    )
    repositories = {"spark.jars.repositories": "https://mirror"}
    confs = session_confs(credentials(server_side_parameters=repositories))
    assert confs["spark.jars.packages"] == DELTA
    monkeypatch.setenv(jar_cache.FAST_START_ENV, "0")
    assert session_confs(credentials())["spark.jars.packages"] == DELTA
