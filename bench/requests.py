"""`make bench-store`: what a build asks of an object store, counted in requests (on loopback
seconds say little): S3Proxy, started here with its request log, answers every request S3A
sends; each is counted by kind (LIST, GET, HEAD, PUT, DELETE, POST), LISTs and GETs split into
the `_delta_log` objects and the data files.

Three measurements, in one warm session (bench/project, target `store`: every table at s3a://):
- a table stream's build (`stream_mirror`, apply_changes) after a change batch against the
  hand-written floor (bench/run.py: table_changes of the new versions MERGEd by key);
- the same model's build with nothing pending;
- an insert-only stream on folders of FILES objects (`files_log`) after NEW files landed,
  against the floor that lists the folder itself and reads the new files.
Writes bench/requests.md.

    python -m bench.requests [--rows 100000] [--changes 300] [--files 1000 10000] [--new 10]
"""

import argparse
import os
import re
import shutil
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bench.files import SOURCE as LANDING
from bench.files import land
from bench.run import PROJECT, Bench
from scripts import object_store

REQUEST = re.compile(
    r"^(?P<at>\d\d:\d\d:\d\d\.\d{3}) .*?\{(?P<method>[A-Z]+)@\w+ (?P<url>\S+) HTTP/", re.M
)
# A statement in dbt's debug log: its time and its first line (after dbt's query comment).
STATEMENT = re.compile(
    r"^\x1b\[0m(?P<at>\d\d:\d\d:\d\d\.\d{3})\d* \[debug\] \[[^\]]*\]: On [^:]+: "
    r"(?:/\*.*?\*/\s*)?(?P<sql>.*?)$",
    re.M | re.S,
)
DBT_LOG = PROJECT / "logs" / "dbt.log"
KINDS = ("LIST log", "LIST data", "GET log", "GET data", "HEAD", "PUT", "DELETE", "POST")
FILES_FLOOR = "bench.files_floor"
SEED = 10  # the objects of a folder written through Spark; the rest are copies


def kind(method: str, url: str) -> str:
    """A request's kind: a LIST is a GET of the bucket (path style) with a prefix."""
    parts = urlsplit(url)
    keys = parts.path.strip("/").split("/", 1)
    if method == "GET" and len(keys) == 1:
        prefix = parse_qs(parts.query).get("prefix", [""])[0]
        return "LIST log" if "_delta_log" in prefix else "LIST data"
    if method == "GET":
        return "GET log" if "/_delta_log/" in parts.path else "GET data"
    return method


class Requests:
    """The request log, read from where the last count stopped."""

    def __init__(self, log: Path) -> None:
        self.log, self.offset = log, 0
        self.last: list[tuple[str, str]] = []  # the last count's requests: kind, path
        self.times: list[str] = []  # and when each was made
        self.dbt_offset = DBT_LOG.stat().st_size if DBT_LOG.exists() else 0
        self.statements: list[tuple[str, str]] = []  # the last count's statements: time, text

    def since_last(self) -> Counter:
        data = self.log.read_bytes()[self.offset :]
        self.offset += len(data)
        found = list(REQUEST.finditer(data.decode(errors="replace")))
        self.last = [(kind(m["method"], m["url"]), _path(m["url"])) for m in found]
        self.times = [m["at"] for m in found]
        self.statements = self._statements()
        return Counter(k for k, _ in self.last)

    def _statements(self) -> list[tuple[str, str]]:
        """The statements dbt logged since the last count (none when dbt logs elsewhere)."""
        if not DBT_LOG.exists():
            return []
        with DBT_LOG.open("rb") as log:
            log.seek(self.dbt_offset)
            text = log.read().decode(errors="replace")
        self.dbt_offset += len(text.encode())
        entries = re.split(r"(?=^\x1b\[0m\d\d:\d\d:)", text, flags=re.M)
        found = (STATEMENT.match(entry) for entry in entries)
        return [(m["at"], " ".join(m["sql"].split())[:60]) for m in found if m]

    def by_statement(self) -> Counter:
        """The last count's requests by the statement dbt was running when each was made
        (`between statements`: the lease, dbt's own start)."""
        counts: Counter = Counter()
        for at in self.times:
            running = [sql for started, sql in self.statements if started <= at]
            counts[running[-1] if running else "between statements"] += 1
        return counts

    def by_place(self) -> Counter:
        """The last count's requests by the table (schema.db/table) or folder they went to."""
        return Counter(_place(path) for _, path in self.last)

    def of_data(self) -> list[str]:
        """The last count's requests that list, read or write outside a `_delta_log`."""
        data = ("LIST data", "GET data", "PUT", "DELETE", "POST")
        return [f"{k} {p}" for k, p in self.last if k in data]


PLACE = re.compile(r"/(\w+\.db/\w+|_stream_leases)")


def _place(path: str) -> str:
    found = PLACE.search(path)
    return found[1].replace(".db/", ".") if found else path


def _path(url: str) -> str:
    parts = urlsplit(url)
    prefix = parse_qs(parts.query).get("prefix", [""])[0]
    return f"{parts.path}?prefix={prefix}" if prefix else parts.path


def table_builds(bench: Bench, requests: Requests, rows: int, changes: int) -> dict:
    """One change batch: the stream's build, the floor's, then an empty build."""
    bench.create_source(rows)
    bench.apply_changes(rows, changes, 0)
    requests.since_last()
    bench.dbt("run", "--select", "stream_mirror")
    stream, stream_places = requests.since_last(), requests.by_place()
    statements = requests.by_statement()
    bench.floor()
    floor, floor_places = requests.since_last(), requests.by_place()
    bench.dbt("run", "--select", "stream_mirror")
    empty = requests.since_last()
    source_data = [r for r in requests.of_data() if "/bench_raw.db/orders/" in r]
    wrong = bench.rows_wrong(["bench.stream_mirror", "bench.floor_target"])
    return {
        "stream": stream,
        "floor": floor,
        "empty": empty,
        "empty_source_data": source_data,
        "places": (stream_places, floor_places),
        "statements": statements,
        "wrong": wrong,
    }


def folder_builds(bench: Bench, requests: Requests, files: int, new: int, blobs: Path) -> dict:
    """A folder of `files` objects, its stream's first build, then NEW landed: the stream's
    build against the floor's listing and read. The folder's first objects are SEED files
    written by Spark and copies of them made in the store's own folder (`blobs`): how the
    objects came does not change what a LIST of them costs, and writing ten thousand through
    Spark on two cores took most of an hour."""
    bench.sql(f"drop table if exists {LANDING}")
    bench.sql(f"drop table if exists {FILES_FLOOR}")
    bench.sql(
        f"create table {LANDING} (id bigint, customer_id bigint, kind string, amount double, "
        "at timestamp) using parquet"
    )
    land(bench, min(files, SEED), 10, 0)
    folder = bench.sql(f"describe detail {LANDING}")[0]["location"]
    copy_objects(blobs / folder.removeprefix("s3a://"), files - SEED)
    bench.sql(f"refresh table {LANDING}")
    bench.dbt("run", "--full-refresh", "--select", "files_log")
    bench.spark.table(LANDING).write.format("delta").saveAsTable(FILES_FLOOR)
    seen = listed(bench, folder)
    land(bench, new, 10, files * 10)
    requests.since_last()
    bench.dbt("run", "--select", "files_log")
    stream = requests.since_last()
    landed = sorted(listed(bench, folder) - seen)
    bench.spark.read.parquet(*landed).write.format("delta").mode("append").saveAsTable(FILES_FLOOR)
    floor = requests.since_last()
    return {"stream": stream, "floor": floor, "new": len(landed)}


def copy_objects(folder: Path, copies: int) -> None:
    """`copies` more objects in the store's folder, each a copy of one of its Parquet files
    with the S3Proxy attributes (ETag) kept."""
    seeds = sorted(folder.glob("part-*.parquet"))
    for number in range(max(copies, 0)):
        seed = seeds[number % len(seeds)]
        copy = folder / f"part-{number:05d}-{uuid.uuid4()}-copy.snappy.parquet"
        shutil.copy2(seed, copy)  # with its extended attributes, where S3Proxy keeps ETags


def listed(bench: Bench, folder: str) -> set[str]:
    """The data files in `folder`, listed through S3A as a hand-written job would."""
    jvm: Any = bench.spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(folder)
    filesystem = path.getFileSystem(bench.spark._jsc.hadoopConfiguration())
    names = (str(status.getPath()) for status in filesystem.listStatus(path))
    return {name for name in names if name.rsplit("/", 1)[-1].startswith("part-")}


def row(name: str, counts: Counter) -> str:
    cells = " | ".join(str(counts[k]) for k in KINDS)
    return f"| {name} | {cells} | {sum(counts.values())} |"


def report(options: argparse.Namespace, table: dict, folders: dict[int, dict]) -> str:
    header = "| build | " + " | ".join(KINDS) + " | all |"
    rule = "| --- |" + " ---: |" * (len(KINDS) + 1)
    lines = [
        "# Requests to an object store per build (`make bench-store`)",
        "",
        f"S3Proxy on loopback, S3A (Hadoop of PySpark's jars); {options.rows:,} rows, a batch of "
        f"{options.changes} changes; folders of {', '.join(f'{f:,}' for f in folders)} objects "
        f"with {options.new} new. Rows wrong (stream, floor): {table['wrong']}.",
        "",
        header,
        rule,
        row("table stream build", table["stream"]),
        row("floor (table_changes + MERGE)", table["floor"]),
        row("empty build", table["empty"]),
    ]
    for files, found in folders.items():
        lines.append(row(f"insert-only build, {files:,} objects", found["stream"]))
        lines.append(row(f"floor (list + read), {files:,} objects", found["floor"]))
    stream, floor = sum(table["stream"].values()), sum(table["floor"].values())
    lines += ["", f"- table stream / floor: {stream / floor:.2f}x the requests (target 1.2x)"]
    lines.append(
        f"- empty build: {len(table['empty_source_data'])} LISTs or GETs of the source's data "
        "files (target 0)"
    )
    if len(folders) > 1:
        small, large = min(folders), max(folders)
        per_new = {
            f: folders[f]["stream"]["LIST data"] / max(folders[f]["new"], 1) for f in folders
        }
        lines.append(
            f"- data LISTs per new file, {large:,} objects against {small:,}: "
            f"{per_new[large] / max(per_new[small], 1e-9):.2f}x (target 1.3x)"
        )
    lines += ["", "Where the table stream's build and the floor's requests went:", ""]
    lines += ["| table or folder | stream build | floor |", "| --- | ---: | ---: |"]
    stream_places, floor_places = table["places"]
    for place in sorted(set(stream_places) | set(floor_places)):
        lines.append(f"| {place} | {stream_places[place]} | {floor_places[place]} |")
    lines += ["", "The table stream's build by statement (in the order they ran):", ""]
    lines += ["| statement | requests |", "| --- | ---: |"]
    for statement, count in table["statements"].items():
        lines.append(f"| `{statement.replace('|', '/')}` | {count} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=300)
    parser.add_argument("--files", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--new", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "requests.md")
    options = parser.parse_args()
    home = PROJECT.parent.parent / "build" / "bench-store"
    for stale in (home, PROJECT / "metastore-store"):  # a fresh bucket, and its catalog
        shutil.rmtree(stale, ignore_errors=True)
    store = object_store.start(home / "s3", request_log=True)
    try:
        os.environ.update(
            DBT_TARGET="store",
            BENCH_WAREHOUSE=f"s3a://{store['bucket']}/bench/warehouse",
            BENCH_S3_ENDPOINT=store["endpoint"],
            BENCH_S3_ACCESS_KEY=store["access_key"],
            BENCH_S3_SECRET_KEY=store["secret_key"],
        )
        bench = Bench()
        requests = Requests(home / "s3" / "requests.log")
        table = table_builds(bench, requests, options.rows, options.changes)
        blobs = home / "s3" / "blobs"
        folders = {f: folder_builds(bench, requests, f, options.new, blobs) for f in options.files}
        options.out.write_text(report(options, table, folders))
        print(options.out.read_text())
    finally:
        object_store.stop(home / "s3")


if __name__ == "__main__":
    main()
