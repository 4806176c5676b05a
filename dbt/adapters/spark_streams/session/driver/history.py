"""DESCRIBE HISTORY on the embedded session, read on the driver instead of in a Spark job.

Delta answers DESCRIBE HISTORY with a Spark job that reads one commit file per version
(`DeltaHistoryManager.getHistoryImpl`: `spark.range(start, end + 1).mapPartitions`), which
costs 0.1 to 0.2 s on a local session whether it reads one commit or thirty. A stream build
reads two or three histories (its target's offsets, its source's newest commits, its own
commit's counts), most of what a build with nothing to do costs. On the embedded session the
driver reads those small files itself: this module does what `getHistoryImpl` does, with
Delta's own functions for every step (the commit's file, its CommitInfo, the timestamp, the
row it becomes, the encoder), and returns the rows as a DataFrame, so a caller gets exactly
the rows DESCRIBE HISTORY would give, and dbt's cursor, logging and errors are unchanged.
Where Delta asks each commit file's status for its time, the commits after the snapshot's
checkpoint take theirs from the listing that found them: on an object store each status asked
is a request (a HEAD) per version read.

Only the plain form on a Delta table of the session catalog, for at most MOST_VERSIONS
versions, is answered here: `describe history name [limit n]`. Anything else (a path, a view,
a longer history, a table with in-commit timestamps, a commit without commit info, a Spark
Connect session, any error) is left to Spark, whose answer and error messages stay the
reference.
"""

import re
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.spark_streams.session.driver.java import java_class
from dbt.adapters.spark_streams.session.driver.tables import (
    DELTA,
    LeaveToSpark,
    delta_table,
    driver_answer,
    name_parts,
    newest_snapshot,
    plain_statement,
)

PLAIN_HISTORY = plain_statement(r"describe\s+history", r"(?:\s+limit\s+(?P<limit>\d{1,9}))?")
# The most versions read on the driver, one after the other (2 to 3 ms each here); Delta's job
# reads a longer range in parallel tasks for about 0.15 s plus its files, so it wins beyond.
MOST_VERSIONS = 64


def history_frame(session: SparkSession, sql: str) -> DataFrame | None:
    """DESCRIBE HISTORY's result for `sql`, read on the driver; None when Spark must run the
    statement itself (see the module docstring)."""
    return driver_answer(session, PLAIN_HISTORY, sql, _read)


def _read(session: SparkSession, jvm: Any, jsession: Any, match: re.Match[str]) -> DataFrame:
    """What `DescribeDeltaHistoryCommand.run` returns, without its Spark job."""
    parts = name_parts(match["name"])
    limit = None if match["limit"] is None else int(match["limit"])
    if limit is not None and limit < 1:
        raise LeaveToSpark
    log, snapshot = newest_snapshot(jvm, jsession, delta_table(jvm, jsession, parts))
    in_commit = java_class(jvm, f"{DELTA}.DeltaConfigs").IN_COMMIT_TIMESTAMPS_ENABLED()
    if in_commit.fromMetaData(snapshot.metadata()):
        raise LeaveToSpark  # timestamps come from the commits then: Delta's own reading
    end = snapshot.version()
    if limit is None:
        start = java_class(jvm, f"{DELTA}.DeltaHistoryManager").getEarliestDeltaFile(log)
    else:
        start = max(end - limit + 1, 0)
    if end - start + 1 > MOST_VERSIONS:
        raise LeaveToSpark
    history = _commits(jvm, log, snapshot, start, end)
    encoder = java_class(jvm, f"{DELTA}.implicits.package").deltaHistoryEncoder()
    rows = java_class(jvm, "java.util.ArrayList")()
    for entry in reversed(history):  # newest first, as DESCRIBE HISTORY lists them
        rows.add(entry)
    return DataFrame(jsession.createDataset(rows, encoder).toDF(), session)


def _commits(jvm: Any, log: Any, snapshot: Any, start: int, end: int) -> list[Any]:
    """`getHistoryImpl` on the driver: each version's commit info with its file's
    modification time, made monotonic as Delta makes it, oldest first."""
    files = java_class(jvm, f"{DELTA}.util.DeltaCommitFileProvider").apply(snapshot)
    manager = java_class(jvm, f"{DELTA}.DeltaHistoryManager")
    history_row = java_class(jvm, f"{DELTA}.DeltaHistory")
    conf = log.newDeltaHadoopConf()
    store, filesystem = log.store(), log.logPath().getFileSystem(conf)
    listed = listed_commit_times(jvm, snapshot, start)
    history: list[Any] = []
    previous = None
    for version in range(start, end + 1):
        path = files.deltaFile(version)
        try:
            info = manager.getCommitInfoOpt(store, path, conf)
            timestamp = listed.get(version)
            if timestamp is None:
                timestamp = filesystem.getFileStatus(path).getModificationTime()
        except Py4JJavaError as error:
            if _missing_file(jvm, error):
                continue  # removed by log cleanup while reading: Delta skips it too
            raise
        if info.isEmpty():
            raise LeaveToSpark  # Delta stands in an empty commit info: rare, leave it to Delta
        if previous is not None and timestamp <= previous:
            timestamp = previous + 1
        previous = timestamp
        history.append(history_row.fromCommitInfo(info.get().withTimestamp(timestamp)))
    return history


def listed_commit_times(jvm: Any, snapshot: Any, start: int) -> dict[int, int]:
    """The modification time of each commit file from version `start` on that the snapshot's
    log segment holds (the commits after its checkpoint), from the listing that found them: a
    commit file never changes, and on an object store each status asked again is a request (a
    HEAD) per version. Read newest first, so a short history reads a few of them."""
    names = java_class(jvm, f"{DELTA}.util.FileNames")
    times: dict[int, int] = {}
    deltas = snapshot.logSegment().deltas().reverseIterator()
    while deltas.hasNext():
        status = deltas.next()
        version = int(names.deltaVersion(status))
        if version < start:
            break
        times[version] = int(status.getModificationTime())
    return times


def _missing_file(jvm: Any, error: Py4JJavaError) -> bool:
    """Whether the JVM error is a FileNotFoundException."""
    missing = java_class(jvm, "java.lang.Class").forName("java.io.FileNotFoundException")
    return bool(missing.isInstance(error.java_exception))
