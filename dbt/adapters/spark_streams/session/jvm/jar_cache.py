"""The Delta jars, resolved once per machine and kept in a folder the adapter manages.

`spark.jars.packages` makes every Spark start run an Ivy resolution (one to three seconds here,
even when every jar is already in Ivy's cache), and Spark then copies each resolved jar twice
more (as a file and as a Python path entry). So the first start with a `delta_package` resolves
it as before, through Spark's own Ivy machinery, and afterwards copies the jars it resolved into

    <cache>/jars/<coordinate>/        (<cache>: SPARK_STREAMS_CACHE_DIR, default
                                       $XDG_CACHE_HOME/dbt-spark-streams or ~/.cache/...)

with a `manifest.json` listing them in Ivy's class-path order. Later starts pass those files
as `spark.jars` (what `jars_dir` does) and resolve nothing. The folder is filled under a
temporary name and renamed into place once the manifest is written, so processes starting at
once never see half a folder; a folder whose manifest is missing or does not match its files is
ignored (the start resolves again) and replaced. Processes that find no cache at once (the
workers of a test run on a new machine) resolve one at a time, under a lock file beside the
folder: Ivy's downloads into its shared cache fail when two processes fetch the same jar, and
the ones that waited then start from the folder the first one stored.
"""

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
# Set to 0 to start the way the adapter did before the cache: `spark.jars.packages` on every
# start, no class-data-sharing archive (see session/jvm/cds.py). bench/startup.py compares the two.
FAST_START_ENV = "SPARK_STREAMS_FAST_START"
CACHE_DIR_ENV = "SPARK_STREAMS_CACHE_DIR"
# Confs with which the profile takes over jar resolution itself; the cache then stays out.
RESOLUTION_CONFS = (
    "spark.jars",
    "spark.jars.packages",
    "spark.jars.repositories",
    "spark.jars.ivy",
    "spark.jars.ivySettings",
    "spark.jars.excludes",
)


def fast_start_enabled() -> bool:
    """False when SPARK_STREAMS_FAST_START is 0/false/no/off: the old start, for comparison."""
    return os.environ.get(FAST_START_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def cache_root() -> Path:
    """Where the adapter keeps what it builds once per machine (jars, CDS archives)."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "dbt-spark-streams"


def entry_dir(coordinate: str) -> Path:
    """The folder of one coordinate: `io.delta:delta-spark_4.2_2.13:4.4.0` becomes
    `jars/io.delta_delta-spark_4.2_2.13_4.4.0` (characters outside [A-Za-z0-9._-] become _,
    a long list of coordinates is shortened and told apart by a hash)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", coordinate.strip())
    if len(safe) > 120:
        safe = f"{safe[:80]}-{hashlib.sha256(coordinate.encode()).hexdigest()[:16]}"
    return cache_root() / "jars" / safe


def applies(server_side_parameters: Mapping[str, object]) -> bool:
    """Whether the cache may stand in for `spark.jars.packages` on this start.

    Not when it is switched off, nor when the profile's server_side_parameters or
    PYSPARK_SUBMIT_ARGS add jars or change how they are resolved: the start then resolves
    exactly as before.
    """
    if not fast_start_enabled():
        return False
    if any(key in server_side_parameters for key in RESOLUTION_CONFS):
        return False
    submit_args = os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell").split()
    return submit_args == ["pyspark-shell"]


def main_jar_names(coordinates: str) -> set[str]:
    """The file names Spark's Ivy retrieval gives the coordinates' own jars.

    `spark.jars.packages` is a comma-separated list of `group:artifact:version`.
    """
    names = set()
    for coordinate in coordinates.split(","):
        parts = coordinate.strip().split(":")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{coordinate!r} is not a group:artifact:version coordinate")
        group, artifact, version = parts
        names.add(f"{group}_{artifact}-{version}.jar")
    return names


def read_manifest(folder: Path, coordinate: str) -> list[Path] | None:
    """The jars of a complete cache folder in class-path order, else None (missing or broken).

    Complete means: the manifest parses, names this coordinate, and every jar it lists is there
    with the size it had when it was written.
    """
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        if manifest.get("version") != MANIFEST_VERSION or manifest["coordinate"] != coordinate:
            return None
        jars = []
        for entry in manifest["jars"]:
            jar = folder / entry["name"]
            if Path(entry["name"]).name != entry["name"] or jar.stat().st_size != entry["size"]:
                return None
            jars.append(jar)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return jars or None


def cached_jars(coordinate: str) -> list[Path] | None:
    """The coordinate's cached jars, or None when the cache has no complete folder for it."""
    return read_manifest(entry_dir(coordinate), coordinate)


def resolved_jar_files(spark_jars: str) -> list[Path]:
    """The local files behind a started context's `spark.jars` (file: URLs or plain paths)."""
    files = []
    for item in filter(None, (part.strip() for part in spark_jars.split(","))):
        parsed = urlparse(item)
        if parsed.scheme not in ("", "file", "local"):
            raise ValueError(f"{item} is not a local file")
        files.append(Path(unquote(parsed.path) if parsed.scheme else item))
    return files


@contextlib.contextmanager
def resolution_lock(coordinate: str) -> Iterator[None]:
    """Held while a process resolves `coordinate` and stores it: one resolution at a time.

    An advisory lock (flock) on `jars/.<folder>.lock`; the system releases it when the process
    exits, so a killed start never leaves it held.
    """
    folder = entry_dir(coordinate)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(f".{folder.name}.lock"), "a") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def store(coordinate: str, jars: list[Path]) -> list[Path]:
    """Copy what Spark resolved for `coordinate` into its cache folder; the cached files.

    Refuses a list without the coordinate's own jar (something else was resolved). When
    another process stored the coordinate first, its folder is kept and ours dropped; a broken
    folder is replaced.
    """
    names = [jar.name for jar in jars]
    missing = main_jar_names(coordinate) - set(names)
    if missing:
        raise ValueError(f"the resolved jars {names} do not include {sorted(missing)}")
    if len(set(names)) != len(names):
        raise ValueError(f"the resolved jars {names} repeat a file name")
    folder = entry_dir(coordinate)
    existing = read_manifest(folder, coordinate)
    if existing:
        return existing
    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(folder)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        entries = []
        for jar in jars:
            shutil.copyfile(jar, staging / jar.name)
            entries.append({"name": jar.name, "size": (staging / jar.name).stat().st_size})
        manifest = {
            "version": MANIFEST_VERSION,
            "coordinate": coordinate,
            "jars": entries,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        # The manifest is written last: a folder without one is never taken for complete.
        with open(staging / MANIFEST, "w") as out:
            json.dump(manifest, out, indent=1)
            out.flush()
            os.fsync(out.fileno())
        _move_into_place(staging, folder, coordinate)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    stored = read_manifest(folder, coordinate)
    if stored is None:
        raise OSError(f"the jar cache folder {folder} is still incomplete after storing")
    return stored


def _move_into_place(staging: Path, folder: Path, coordinate: str) -> None:
    """Rename the filled staging folder to `folder`, replacing a broken one, keeping a good one.

    A rename onto an existing non-empty folder fails, so of several processes storing at once
    exactly one wins; the others find its complete folder and drop their own.
    """
    for _ in range(3):
        try:
            os.rename(staging, folder)
            return
        except OSError:
            if read_manifest(folder, coordinate) is not None:
                return
            _discard(folder)
    os.rename(staging, folder)


def _discard(folder: Path) -> None:
    """Move a broken folder aside (atomically) and delete it."""
    if not folder.exists():
        return
    trash = folder.with_name(f".{folder.name}.broken-{os.getpid()}-{time.time_ns()}")
    try:
        os.rename(folder, trash)
    except OSError:
        return
    shutil.rmtree(trash, ignore_errors=True)


STALE_STAGING_S = 3600


def _remove_stale_staging(folder: Path) -> None:
    """Staging folders of processes that died while storing (an hour old: nobody is writing)."""
    for staging in folder.parent.glob(f".{folder.name}.*"):
        with contextlib.suppress(OSError):
            if time.time() - staging.stat().st_mtime > STALE_STAGING_S:
                shutil.rmtree(staging, ignore_errors=True)
