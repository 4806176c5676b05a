"""`make bench-methods`: the same stream builds over dbt-spark's `thrift` method and over Spark
Connect, each against a server of PySpark's started here with the same confs (a local master,
Delta, an embedded metastore: scripts/thrift_server.py), one after the other.

The workload is the crash project's (tests/integration/crash_project: a mirror, two audits, an
insert-only stream on a folder, a view stream): its first build, then ROUNDS runs each after a
round of source changes. Counted per run, in the dbt process: the statements the adapter and
dbt sent (the connection manager's add_query), the client's calls to the server (Thrift's
TCLIService methods, Spark Connect's gRPC methods) and the run's time. Writes
bench/methods.md.

    python -m bench.methods [--rounds 3]
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from scripts import thrift_server

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "tests" / "integration" / "crash_project"
PROFILES = {
    "thrift": "      method: thrift\n      host: 127.0.0.1\n      port: {port}\n      user: dbt\n",
    "connect": "      method: connect\n      host: sc://127.0.0.1:{port}\n",
}
THRIFT_CALLS = (
    "ExecuteStatement",
    "GetOperationStatus",
    "FetchResults",
    "GetResultSetMetadata",
    "CloseOperation",
    "OpenSession",
    "CloseSession",
)
PROFILE = "crash:\n  target: dev\n  outputs:\n    dev:\n      type: spark_streams\n{method}" + (
    "      schema: crash\n      threads: 1\n"
)


def counted(counts: Counter, kind: str, function: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        counts[kind] += 1
        return function(*args, **kwargs)

    return call


def count_calls(method: str, counts: Counter) -> None:
    """Count each statement dbt and the adapter send, and each call the client makes."""
    from dbt.adapters.sql import SQLConnectionManager

    SQLConnectionManager.add_query = counted(  # type: ignore[method-assign]
        counts, "statements", SQLConnectionManager.add_query
    )
    if method == "thrift":
        from TCLIService import TCLIService  # PyHive's Thrift client

        for name in THRIFT_CALLS:
            setattr(
                TCLIService.Client, name, counted(counts, name, getattr(TCLIService.Client, name))
            )
        return
    from pyspark.sql.connect.proto import base_pb2_grpc

    stub_init = base_pb2_grpc.SparkConnectServiceStub.__init__

    def init(stub: Any, channel: Any) -> None:
        stub_init(stub, channel)
        for name, value in list(vars(stub).items()):
            if callable(value):
                setattr(stub, name, counted(counts, name, value))

    base_pb2_grpc.SparkConnectServiceStub.__init__ = init  # type: ignore[method-assign]


def one_method(method: str, rounds: int, out: Path) -> None:
    """In this process: a server, the project's runs over `method`, the counts as JSON."""
    from dbt.cli.main import dbtRunner

    work = Path(tempfile.mkdtemp(prefix=f"bench-{method}-"))
    project, home = work / "project", work / "server"
    shutil.copytree(PROJECT, project)
    server = thrift_server.CONNECT if method == "connect" else thrift_server.SERVER
    state = thrift_server.start(home, server=server)
    (project / "profiles.yml").write_text(
        PROFILE.format(method=PROFILES[method].format(port=state["port"]))
    )
    counts: Counter = Counter()
    count_calls(method, counts)
    runner, runs = dbtRunner(), []
    try:
        for number in range(rounds + 1):
            command = "build" if number == 0 else "run"
            counts.clear()
            started = time.monotonic()
            paths = ["--project-dir", str(project), "--profiles-dir", str(project)]
            result = runner.invoke([command, "--vars", f"{{round: {number}}}", *paths])
            if not result.success:
                raise RuntimeError(f"dbt {command} over {method} failed: {result.exception}")
            runs.append({"seconds": time.monotonic() - started, **counts})
    finally:
        thrift_server.stop(home)
    out.write_text(json.dumps(runs))


def report(rounds: int, found: dict[str, list[dict]]) -> str:
    lines = [
        "# The same runs over `thrift` and over Spark Connect (`make bench-methods`)",
        "",
        f"The crash project (five stream models): its first build, then {rounds} runs after a "
        "round of source changes each; a local server of PySpark's for each method, the same "
        "confs. Per run, the mean of the runs after the first build:",
        "",
        "| method | seconds | statements | client calls | calls per statement | calls |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for method, runs in found.items():
        later = runs[1:] or runs
        mean = {k: sum(r.get(k, 0) for r in later) / len(later) for r in later for k in r}
        calls = {k: v for k, v in mean.items() if k not in ("seconds", "statements")}
        total = sum(calls.values())
        shown = ", ".join(f"{k} {v:.0f}" for k, v in sorted(calls.items(), key=lambda i: -i[1]))
        lines.append(
            f"| {method} | {mean['seconds']:.1f} | {mean['statements']:.0f} | {total:.0f} | "
            f"{total / max(mean['statements'], 1):.1f} | {shown} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", choices=sorted(PROFILES))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "methods.md")
    options = parser.parse_args()
    if options.one:
        one_method(options.one, options.rounds, options.json)
        return
    found = {}
    for method in ("thrift", "connect"):
        out = Path(tempfile.mkstemp(suffix=".json")[1])
        subprocess.run(
            [sys.executable, "-m", "bench.methods", "--one", method, "--rounds",
             str(options.rounds), "--json", str(out)],
            check=True, cwd=ROOT,
        )  # fmt: skip
        found[method] = json.loads(out.read_text())
    options.out.write_text(report(options.rounds, found))
    print(options.out.read_text())


if __name__ == "__main__":
    main()
