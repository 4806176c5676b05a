"""`make bench-time-travel`: for_system_time(as_of=t) against Delta's own TIMESTAMP AS OF t.

A table of N rows (default 1M) with Change Data Feed and deletion vectors takes C commits
(default 100), each updating 1% of the rows. Both queries ask for the state at the middle
commit's time; each is timed as a full read of its rows (count and checksum), median of R
runs, side by side in one session. The results must agree row for row. A third timing, the
input floor, only reads what the answer depends on (the state at that instant and the table's
readable change feed, count and checksum, nothing joined): no exact answer built from the
feed can cost less. Writes bench/time_travel.md, which bench/results.md includes.

    python -m bench.time_travel [--rows 1000000] [--commits 100] [--reps 3]
"""

import argparse
import os
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.session.embedded import start_embedded_session
from dbt.adapters.spark_streams.streams.travel.for_system_time import (
    SystemTimeRequest,
    system_time_sql,
)

TABLE = "bench_raw.versions"
TARGET = 3.0
CHECKSUM = "select count(*) as n, sum(hash(id, status, amount)) as h from ({})"


def session() -> SparkSession:
    """An embedded session like the bench project's, in a throwaway warehouse."""
    home = Path(tempfile.mkdtemp(prefix="bench-time-travel-"))
    profile = {
        "schema": "bench",
        "method": "session",
        "warehouse_dir": str(home / "warehouse"),
        "metastore_dir": str(home / "metastore"),
        "driver_memory": "8g",
        "shuffle_partitions": 2,
    }
    if os.environ.get("SPARK_STREAMS_JARS_DIR"):
        profile["jars_dir"] = os.environ["SPARK_STREAMS_JARS_DIR"]
    return start_embedded_session(SparkStreamsCredentials.from_dict(profile))


def build_history(spark: SparkSession, rows: int, commits: int) -> datetime:
    """The table and its commits; the commit time of the middle one."""
    spark.sql("create schema if not exists bench_raw")
    spark.sql(f"drop table if exists {TABLE}")
    spark.sql(
        f"create table {TABLE} (id bigint, status string, amount int) using delta "
        "tblproperties (delta.enableChangeDataFeed = true, "
        "delta.enableDeletionVectors = true)"
    )
    spark.sql(f"insert into {TABLE} select id, 'placed', 0 from range({rows})")
    for commit in range(commits):
        spark.sql(
            f"update {TABLE} set status = 'changed', amount = {commit + 1} "
            f"where id % 100 = {commit % 100}"
        )
    history = spark.sql(f"describe history {TABLE}").collect()
    middle = sorted(history, key=lambda row: row["version"])[len(history) // 2]
    return middle["timestamp"]


def timed(spark: SparkSession, sql: str, reps: int) -> tuple[float, tuple]:
    """Median seconds of a full read of `sql`'s rows, and their count and checksum."""
    seconds: list[float] = []
    result: tuple = ()
    for _ in range(reps):
        began = time.perf_counter()
        [row] = spark.sql(CHECKSUM.format(sql)).collect()
        seconds.append(time.perf_counter() - began)
        result = (row["n"], row["h"])
    return statistics.median(seconds), result


def input_floor_sql(text: str) -> str:
    """The rows `for_system_time` must read for the state at `text`: the state itself and
    every image in the table's change feed (scanned, not joined)."""
    state = f"select id, status, amount from {TABLE} timestamp as of '{text}'"
    feed = f"select id, status, amount from table_changes('{TABLE}', 0)"
    return f"{state} union all {feed}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()

    spark = session()
    moment = build_history(spark, args.rows, args.commits)
    text = moment.strftime("%Y-%m-%d %H:%M:%S.%f")

    def run(sql: str) -> list[dict]:
        return [row.asDict() for row in spark.sql(sql).collect()]

    schema, name = TABLE.split(".")
    request = SystemTimeRequest(schema, name, "as_of", (text,))
    ours = system_time_sql(run, {}, datetime.now(), request)
    delta = f"select * from {TABLE} timestamp as of '{text}'"
    delta_seconds, expected = timed(spark, delta, args.reps)
    our_seconds, got = timed(spark, f"select id, status, amount from ({ours})", args.reps)
    floor_seconds, _ = timed(spark, input_floor_sql(text), args.reps)
    assert got == expected, f"for_system_time disagrees with TIMESTAMP AS OF: {got} != {expected}"
    ratio = our_seconds / delta_seconds
    lines = [
        "## Time travel (issue 16)",
        "",
        "`for_system_time(t, as_of=...)` against Delta's `TIMESTAMP AS OF` for the same "
        f"instant: {args.rows:,} rows, {args.commits} commits of 1% updates, the middle "
        f"commit's time, median of {args.reps} full reads, same rows (count and checksum).",
        "",
        "| query | seconds |",
        "| --- | --- |",
        f"| Delta `TIMESTAMP AS OF` | {delta_seconds:.2f} |",
        f"| input floor: the state and the whole change feed, scanned | {floor_seconds:.2f} |",
        f"| `for_system_time(as_of=...)` | {our_seconds:.2f} |",
        "",
        f"for_system_time / TIMESTAMP AS OF = {ratio:.2f} (target <= {TARGET:.0f}: "
        f"{'met' if ratio <= TARGET else 'not met'}); input floor / TIMESTAMP AS OF = "
        f"{floor_seconds / delta_seconds:.2f}",
        "",
    ]
    (Path(__file__).parent / "time_travel.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
