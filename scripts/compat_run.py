"""The compatibility project (tests/compat/project) run as a user runs it, with the dbt-core
and PySpark of the Python that runs this script: one combination of `make matrix`.

Each step is a dbt process, so each opens its own session of that Spark with Delta's jars for
it. The project's data tests assert the outcome after each build: a mirror equals its source,
an append-only audit holds each order once, an insert-only stream's audit each landed row
once, a view stream's mirror equals its view, a history's open rows equal the source,
`changes()` since the source's first version gives its rows as inserts, and a feed of change
events (late, deleted, delivered twice) applied as a current state and as a history of tiers
holds each key's newest event; a dbt unit test of a stream model runs with them.

    1. `dbt seed --empty` (dbt-core 1.12 and later: the seed's table made with no rows,
       checked by the next build's first hook)
    2. `dbt build --threads 4`: the sources made, the seed loaded, the models' first builds,
       SIGKILLed once four stream builds have committed their writes and not yet their offsets
    3. a round of source changes (updates, deletes, inserts, new files) and `dbt build`: the
       recovery and the changes; every test passes (nothing lost, nothing twice)
    4. with --connect: a Spark Connect server of this Spark started on the same warehouse and
       catalog (with Delta's default for the checksum's copy of a table's file list, as a
       user's server), and after another round of changes the mirror, the audit and the
       change feed's models built over `method: connect` (`dbt build --target connect`), with
       their tests; the mirror's new checksum file holds no file list (the profile's session
       leaves it out)

With --thrift (under scripts/with_thrift.py, `make test-thrift-ci`) steps 1 to 3 run over
dbt-spark's `thrift` method against that Spark Thrift Server instead; then the server is
SIGKILLed the moment the mirror's MERGE commits (before its reply), started again, and the
next build passes every test and finds nothing left to commit; show_streams then lists the
streams, none stale. The server keeps Delta's default for the checksum's copy of a table's
file list; the checksum files the builds wrote hold none (the profile's session SETs it off).

Usage: scripts/compat_run.py <work dir> [--connect | --thrift]
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import yaml  # type: ignore[import-untyped]

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dbt.adapters.spark_streams.streams.builds.faults import BUILDS_ENV, CRASH_ENV  # noqa: E402
from dbt.adapters.spark_streams.versions import default_delta_package  # noqa: E402
from scripts import thrift_server, with_thrift  # noqa: E402

PROJECT = REPO / "tests" / "compat" / "project"
DBT = str(Path(sys.executable).with_name("dbt"))
CRASHED_BUILDS = 4  # of the eight stream models, as many as the profile's threads
TESTS = (
    "mirror_equals_source", "audit_has_each_order_once", "events_audit_has_each_event_once",
    "paired_mirror_is_view", "history_current_is_source", "changes_are_source", "seed_loaded",
    "mirror_passes_a_streams_rows", "latest_has_every_customer", "state_is_newest_event",
)  # fmt: skip

# Over Connect: a table stream's mirror, an append-only stream's audit, a change feed's
# current state and history, and their tests.
OVER_CONNECT = (
    "customers_mirror",
    "orders_audit",
    "customers_state",
    "customers_tiers",
    "mirror_equals_source",
    "audit_has_each_order_once",
    "state_is_newest_event",
)
CONNECT_TESTS = OVER_CONNECT[4:]


class StepFailed(Exception):
    pass


def dbt(
    project: Path, *args: str, env: dict[str, str] | None = None, exits: int | None = 0
) -> str:
    """`dbt <args>` in the project; its output. Printed with the step's seconds. It must exit
    with `exits` (None: with a failure), or with SIGKILL when a crash is asked for."""
    began = time.monotonic()
    environment = {**os.environ, "DBT_PROFILES_DIR": str(project), **(env or {})}
    environment["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "0"
    done = subprocess.run([DBT, *args], cwd=project, env=environment, capture_output=True,
                          text=True, timeout=900, check=False)  # fmt: skip
    print(f"  dbt {' '.join(args)}: exit {done.returncode}, {time.monotonic() - began:.0f} s")
    expected = -9 if env and CRASH_ENV in env else exits
    failed = done.returncode in (0, -9) if expected is None else done.returncode != expected
    if failed:
        raise StepFailed(f"dbt {' '.join(args)} exited {done.returncode}:\n{done.stdout}")
    return done.stdout


def passed_every_test(output: str, tests: tuple[str, ...] = TESTS) -> None:
    missing = [test for test in tests if not re.search(rf"PASS (\S+::)?{test} ", output)]
    if missing:
        raise StepFailed(f"not passed: {', '.join(missing)}\n{output}")


def wait_for_jvm_exit(metastore: Path, timeout: float = 120) -> None:
    """A killed dbt's JVM ends once it notices its Python is gone, freeing embedded Derby."""
    marker = f"derby.system.home={metastore}"
    deadline = time.monotonic() + timeout
    while subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            raise StepFailed(f"the killed dbt's JVM ({marker}) is still running")
        time.sleep(1)


def crash_and_recover(
    project: Path, target: dict[str, str] | None = None, server: Path | None = None
) -> None:
    """Steps 1 to 3 on the profile's `dev` target, or on `target` (its name and the
    environment its profile reads) at the Thrift Server in `server`."""
    env = dict(target or {})
    chosen = ["--target", env.pop("target")] if "target" in env else []
    seeded_empty = tuple(int(part) for part in version("dbt-core").split(".")[:2]) >= (1, 12)
    if seeded_empty:
        dbt(project, "seed", "--empty", *chosen, env=env)
    first = f"{{round: 0, seeded_empty: {'true' if seeded_empty else 'false'}}}"
    crash = {**env, CRASH_ENV: "after_commit", BUILDS_ENV: str(CRASHED_BUILDS)}
    dbt(project, "build", *chosen, "--vars", first, env=crash)
    if server:  # the killed run's statements end in the server, as a user's rerun finds them
        began = time.monotonic()
        thrift_server.wait_until_idle(server)
        print(f"  the Thrift Server idle again: {time.monotonic() - began:.0f} s")
    else:
        wait_for_jvm_exit(project / "metastore")
    passed_every_test(dbt(project, "build", *chosen, "--vars", "{round: 1}", env=env))


def over_connect(project: Path) -> None:
    home = project / "connect-server"
    dev = yaml.safe_load((project / "profiles.yml").read_text())["compat"]["outputs"]["dev"]
    profile = {  # the embedded target's catalog and settings, for the server's session
        "warehouse_dir": str(project / dev["warehouse_dir"]),
        "metastore_dir": str(project / dev["metastore_dir"]),
        "shuffle_partitions": dev["shuffle_partitions"],
        # with Delta's default for the checksum's file list, as a user's server keeps it
        "server_side_parameters": {**dev["server_side_parameters"],
                                   **with_thrift.USERS_SERVER["server_side_parameters"]},
    }  # fmt: skip
    began = time.monotonic()
    state = thrift_server.start(home, profile, server=thrift_server.CONNECT)
    print(f"  Spark Connect server {version('pyspark')}: {time.monotonic() - began:.0f} s")
    try:
        env = {"COMPAT_CONNECT_PORT": str(state["port"])}
        output = dbt(project, "build", "--target", "connect", "--vars", "{round: 2}",
                     "--select", *OVER_CONNECT, env=env)  # fmt: skip
        passed_every_test(output, CONNECT_TESTS)
        without_file_list(project / dev["warehouse_dir"] / "compat.db" / "customers_mirror"
                          / "_delta_log")  # fmt: skip
    finally:
        thrift_server.stop(home)


def over_thrift(project: Path, home: Path) -> None:
    """Steps 1 to 3 over `method: thrift`, at the Thrift Server scripts/with_thrift.py started
    (its state in <home>/thrift), the server killed as a MERGE commits, and show_streams."""
    server = json.loads((home / "thrift" / thrift_server.STATE).read_text())
    env = {"COMPAT_THRIFT_PORT": str(server["port"])}
    crash_and_recover(project, {"target": "thrift", **env}, home / "thrift")
    without_file_list(home / "warehouse" / "compat.db" / "customers_mirror" / "_delta_log")
    env = server_killed_on_commit(project, home, env)
    listed = dbt(project, "run-operation", "show_streams", "--target", "thrift", env=env)
    for stream in ("customers_mirror__customers", "orders_audit__orders", "events_audit__events"):
        if not re.search(rf"\| {stream} +\|.*\| false +\| [^|]+\| [^|]+\| false +\|", listed):
            raise StepFailed(f"show_streams does not list {stream} as current:\n{listed}")


def without_file_list(log: Path) -> None:
    """The newest checksum file of a table the build committed to holds its counts and no
    copy of its file list: the server keeps Delta's default, the profile's session does not
    (credentials.py: outside UTC, Delta would check the copy after every commit)."""
    newest = max((path for path in log.glob("*.crc") if path.stem.isdigit()),
                 key=lambda path: int(path.stem))  # fmt: skip
    checksum = json.loads(newest.read_text())
    if checksum.get("allFiles") or not checksum.get("numFiles"):  # (an empty table's is [])
        raise StepFailed(f"{newest} holds a file list, or no counts: {sorted(checksum)}")


def server_killed_on_commit(project: Path, home: Path, env: dict[str, str]) -> dict[str, str]:
    """The Thrift Server SIGKILLed the moment the mirror's MERGE commits, before its reply;
    started again, the next build passes every test and commits nothing more to the mirror
    (the killed build's commit carried its offset). The environment for the new server."""
    log = home / "warehouse" / "compat.db" / "customers_mirror" / "_delta_log"
    committed = max(int(path.stem) for path in log.glob("*.json"))
    fired = thrift_server.kill_on_commit(home / "thrift", log, committed + 1)
    args = ("run", "--target", "thrift", "--select", "customers_mirror", "--vars", "{round: 2}")
    lost = dbt(project, *args, env=env, exits=None)
    if not fired.is_set() or "Traceback" in lost:
        raise StepFailed(f"the server was not killed as the MERGE committed:\n{lost}")
    postgres = json.loads((home / "postgres" / "postgres.json").read_text())
    restarted = thrift_server.start(
        home / "thrift", with_thrift.server_profile(home, postgres, server=True)
    )
    env = {"COMPAT_THRIFT_PORT": str(restarted["port"])}
    passed_every_test(dbt(project, "build", "--target", "thrift", env=env))
    if max(int(path.stem) for path in log.glob("*.json")) != committed + 1:
        raise StepFailed("the build after the lost server wrote the mirror again")
    return env


def main(work: Path, connect: bool, thrift: Path | None) -> int:
    delta = default_delta_package()
    print(f"dbt-core {version('dbt-core')}, PySpark {version('pyspark')}, Delta {delta}")
    project = work / "project"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(PROJECT, project)
    try:
        if thrift:
            over_thrift(project, thrift)
            print("passed")
            return 0
        crash_and_recover(project)
        if connect:
            over_connect(project)
    except StepFailed as failed:
        print(f"FAILED: {failed}")
        return 1
    print("passed")
    return 0


if __name__ == "__main__":
    thrift_home = os.environ.get("SPARK_STREAMS_THRIFT") if "--thrift" in sys.argv else None
    sys.exit(main(Path(sys.argv[1]).resolve(), "--connect" in sys.argv[2:],
                  Path(thrift_home) if thrift_home else None))  # fmt: skip
