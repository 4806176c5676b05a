"""DESCRIBE DETAIL on the embedded session, its file count and size from the table's checksum.

Delta answers DESCRIBE DETAIL from the snapshot's computed state (`Snapshot.numOfFiles` and
`sizeInBytes` are `computedState`'s), which each new snapshot builds in a Spark job over the
table's log, its checkpoint and every commit since, although the version's checksum file
(`.crc`) holds both counts and Delta checks them against that state: 0.5 to 0.8 s for a
small table on a local session, and more as the table's files grow. A build asks it after
each change of a table: a stream target's size (whether the write names its key ranges),
each table's size behind a view stream or a materialized view (the cost estimate), the
registry's file count. This module builds Delta's own row (`TableDetail`, as
`DescribeDeltaDetailCommand.describeDeltaTable` fills it) with the checksum's `numFiles` and
`tableSizeBytes` and every other field as Delta takes it, so a caller gets the rows DESCRIBE
DETAIL gives.

Only the plain form `describe detail name` on a Delta table of the session catalog whose
newest version has a checksum is answered here. Anything else (a path, a view, a table
without a checksum, a table whose protocol supports clustering, whose clustering columns come
from the computed state, a Spark Connect session, any error) is left to Spark.
"""

import re
from typing import Any

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

PLAIN_DETAIL = plain_statement(r"describe\s+detail")
CONVERTERS = "scala.jdk.javaapi.CollectionConverters"


def detail_frame(session: SparkSession, sql: str) -> DataFrame | None:
    """DESCRIBE DETAIL's result for `sql`, its counts from the checksum; None when Spark must
    run the statement itself (see the module docstring)."""
    return driver_answer(session, PLAIN_DETAIL, sql, _read)


def _read(session: SparkSession, jvm: Any, jsession: Any, match: re.Match[str]) -> DataFrame:
    """What `DescribeDeltaDetailCommand.describeDeltaTable` returns, without its Spark job."""
    table = delta_table(jvm, jsession, name_parts(match["name"]))
    log, snapshot = newest_snapshot(jvm, jsession, table)
    checksum = snapshot.checksumOpt()
    if snapshot.version() < 0 or checksum.isEmpty():
        raise LeaveToSpark
    protocol, metadata = snapshot.protocol(), snapshot.metadata()
    if java_class(jvm, f"{DELTA}.skipping.clustering.ClusteredTableUtils").isSupported(protocol):
        raise LeaveToSpark  # its clustering columns are read from the computed state
    counts = checksum.get()
    commit = java_class(jvm, f"{DELTA}.util.DeltaCommitFileProvider").apply(snapshot)
    path = commit.deltaFile(snapshot.version())
    modified = path.getFileSystem(log.newDeltaHadoopConf()).getFileStatus(path)
    created = metadata.createdTime()
    timestamp = java_class(jvm, "java.sql.Timestamp")
    detail = java_class(jvm, f"{DELTA}.commands.TableDetail")
    row = detail.toRow(
        detail(
            "delta",
            metadata.id(),
            table.qualifiedName(),
            metadata.description(),
            log.dataPath().toString(),
            timestamp(created.get()) if created.isDefined() else None,
            timestamp(modified.getModificationTime()),
            metadata.partitionColumns(),
            _seq(jvm, []),
            counts.numFiles(),
            counts.tableSizeBytes(),
            metadata.configuration(),
            protocol.minReaderVersion(),
            protocol.minWriterVersion(),
            _seq(jvm, _feature_names(jvm, protocol)),
        )
    )
    rows = java_class(jvm, "java.util.Collections").singletonList(row)
    return DataFrame(jsession.createDataFrame(rows, detail.schema()), session)


def _seq(jvm: Any, strings: list[str]) -> Any:
    """A Scala Seq of the strings, in their order."""
    values = java_class(jvm, "java.util.ArrayList")()
    for value in strings:
        values.add(value)
    return java_class(jvm, CONVERTERS).asScala(values).toSeq()


def _strings(jvm: Any, values: Any) -> list[str]:
    """A Scala collection of strings as a list, in its order."""
    return [str(value) for value in java_class(jvm, CONVERTERS).asJava(values)]


def _feature_names(jvm: Any, protocol: Any) -> list[str]:
    """The protocol's features as Delta lists them: the implicitly supported ones' names and
    the reader and writer feature names."""
    implicit = java_class(jvm, CONVERTERS).asJava(protocol.implicitlySupportedFeatures())
    named = _strings(jvm, protocol.readerAndWriterFeatureNames())
    return sorted({str(feature.name()) for feature in implicit} | set(named))
