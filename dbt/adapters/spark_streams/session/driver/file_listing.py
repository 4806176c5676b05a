"""A file table's folder listed on the embedded session's driver instead of in a Spark job.

An insert-only stream build refreshes its source table, then lists the table's folder into a
temporary view with Spark's `binaryFile` source (streams/files/table.py's `list_folder`). As
SQL that view is a binaryFile scan: a Spark job whose tasks look up each file of the folder
again, at every use of the view, while the table's own read lists the folder once more. On
the embedded session this module answers both statements on the driver, so the folder is
listed once per build:

- the REFRESH TABLE marked LISTING_FOLLOWS drops the table's cached relation and resolves the
  table again, which lists the folder once (Spark's InMemoryFileIndex, through the Hadoop
  FileSystem on the driver); the build's read later finds that relation in the session's
  cache. A table whose listing binaryFile would list alike (one folder, no partition columns,
  no option that filters files) keeps its file index for the listing that follows.
- the listing view's statement takes the files of that index, or of binaryFile's own index
  (which lists on the driver too) for any other folder, and makes the view of them: the
  index's files as JSON (Jackson, in the JVM), read back by `from_json` over a one-row local
  relation, with the filter binaryFile's scan applies to its index's files (data files, not
  empty). Paths are Hadoop's `Path.toString`, as binaryFile gives them.

Anything else, a Spark Connect session, or any error leaves the statement to Spark, which
runs it as written (and raises its own error, a vanished folder's PATH_NOT_FOUND included).
"""

import re
from typing import Any

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.spark_streams.session.driver.java import java_class
from dbt.adapters.spark_streams.session.driver.tables import table_identifier
from dbt.adapters.spark_streams.streams.files.table import (
    BINARY_LISTING,
    LISTING_FOLLOWS,
    LISTING_VIEW_PREFIX,
)

_QUOTED = r"`(?:[^`]|``)+`"
_NAME = rf"(?:{_QUOTED}|\w+)(?:\.(?:{_QUOTED}|\w+)){{0,2}}"
REFRESH = re.compile(
    rf"\s*refresh\s+table\s+(?P<name>{_NAME})\s+{re.escape(LISTING_FOLLOWS)}\s*", re.IGNORECASE
)
LISTING_VIEW = re.compile(
    rf"\s*create\s+or\s+replace\s+temporary\s+view\s+(?P<view>{LISTING_VIEW_PREFIX}\w+)\s+as\s+"
    rf"{re.escape(BINARY_LISTING)}(?P<location>{_QUOTED})\s*",
    re.IGNORECASE,
)
# Options under which a table lists its folder otherwise than binaryFile does.
LISTING_OPTIONS = {
    "recursivefilelookup",
    "basepath",
    "modifiedbefore",
    "modifiedafter",
    "pathglobfilter",
}
FILE_SCHEMA = "array<struct<path:string,length:bigint,modification_time:bigint>>"
# binaryFile's scan of its index's files: data files (PartitioningAwareFileIndex.isDataPath)
# that are not empty.
FILE_NAME = "regexp_extract(path, '[^/]*$', 0)"
DATA_FILE = (
    f"length > 0 and not ((startswith({FILE_NAME}, '_') and not contains({FILE_NAME}, '=')) "
    f"or startswith({FILE_NAME}, '.'))"
)


def unquote(identifier: str) -> str:
    """An identifier as Spark reads it: backquotes removed, doubled ones made single."""
    if identifier.startswith("`"):
        return identifier[1:-1].replace("``", "`")
    return identifier


class DriverListings:
    """One connection's listings: the file index each marked REFRESH TABLE left for the
    listing that follows it, by the folder's qualified path."""

    def __init__(self, session: SparkSession) -> None:
        self.session = session
        self.indexes: dict[str, Any] = {}
        self.mapper: Any = None  # made at the first listing, then kept

    def frame(self, sql: str) -> DataFrame | None:
        """The statement's (empty) result when it is one this module answers, run on the
        driver; None when Spark must run it."""
        jsession = getattr(self.session, "_jsparkSession", None)  # None on Spark Connect
        jvm = getattr(self.session, "_jvm", None)
        if jsession is None or jvm is None:
            return None
        if LISTING_FOLLOWS not in sql and LISTING_VIEW_PREFIX not in sql:
            return None
        try:
            if (refresh := REFRESH.fullmatch(sql)) is not None:
                return self._refresh(jvm, jsession, refresh["name"])
            if (listing := LISTING_VIEW.fullmatch(sql)) is not None:
                location = unquote(listing["location"])
                return self._list(jvm, jsession, listing["view"], location)
        except (Py4JError, PySparkException):
            return None  # Spark runs it, and raises its own error if there is one
        return None

    def _refresh(self, jvm: Any, jsession: Any, name: str) -> DataFrame | None:
        """REFRESH TABLE's effect without its two listings: the cached relation dropped, the
        table resolved again (listed once, and cached for the build's read). Whether the
        table's data is cached is asked of that resolution: asked first (Catalog.isCached),
        it would resolve, and list, the table once more."""
        parts = [unquote(part) for part in re.findall(rf"{_QUOTED}|\w+", name)]
        identifier = table_identifier(jvm, parts[-1], parts[-2] if len(parts) > 1 else None)
        jsession.sessionState().catalog().invalidateCachedTable(identifier)
        table = jsession.table(name)
        cache = jsession.sharedState().cacheManager()
        if not cache.isEmpty() and cache.lookupCachedData(table).nonEmpty():
            return None  # REFRESH TABLE also caches the table's data again
        relation = table.queryExecution().analyzed().collectLeaves().apply(0)
        index = _plain_listing(jsession, relation)
        if index is not None:
            root = str(index.rootPaths().apply(0).toString())
            self.indexes[_qualified(jvm, jsession, root)] = index
        return _empty(self.session, jsession)

    def _list(self, jvm: Any, jsession: Any, view: str, location: str) -> DataFrame:
        """The listing view of `location`'s files, from the index its refresh left, else from
        binaryFile's own index."""
        index = self.indexes.pop(_qualified(jvm, jsession, location), None)
        if index is None:
            binary = jsession.read().format("binaryFile").load(location)
            index = binary.queryExecution().analyzed().relation().location()
        converters = java_class(jvm, "scala.jdk.javaapi.CollectionConverters")
        files = converters.asJava(index.allFiles())
        if self.mapper is None:
            self.mapper = _file_mapper(jvm)
        text = self.mapper.writeValueAsString(files)
        strings = java_class(jvm, "org.apache.spark.sql.Encoders").STRING()
        one = java_class(jvm, "java.util.Collections").singletonList(text)
        rows = jsession.createDataset(one, strings)
        listed = DataFrame(rows.toDF(), self.session).selectExpr(
            f"inline(from_json(value, '{FILE_SCHEMA}'))"
        )
        listed.where(DATA_FILE).selectExpr(
            "path", "length as size", "timestamp_millis(modification_time) as modified"
        ).createOrReplaceTempView(view)
        return _empty(self.session, jsession)


def _plain_listing(jsession: Any, relation: Any) -> Any:
    """The file index of a table that lists its folder as binaryFile would: one existing
    folder, no partition columns, no option that filters the listing; else None."""
    if relation.getClass().getSimpleName() != "LogicalRelation":
        return None
    fs_relation = relation.relation()
    if fs_relation.getClass().getSimpleName() != "HadoopFsRelation":
        return None
    index = fs_relation.location()
    if index.getClass().getSimpleName() != "InMemoryFileIndex" or index.rootPaths().size() != 1:
        return None
    if not index.partitionSpec().partitionColumns().isEmpty():
        return None
    options = str(fs_relation.options().keySet().mkString("\n")).lower().split("\n")
    if LISTING_OPTIONS & set(options):
        return None
    root = index.rootPaths().apply(0)
    if not root.getFileSystem(jsession.sessionState().newHadoopConf()).exists(root):
        return None  # a vanished folder: binaryFile's listing fails with PATH_NOT_FOUND
    return index


def _qualified(jvm: Any, jsession: Any, location: str) -> str:
    """A folder's path as its file system qualifies it: the key both statements agree on."""
    path = java_class(jvm, "org.apache.hadoop.fs.Path")(location)
    system = path.getFileSystem(jsession.sessionState().newHadoopConf())
    return str(system.makeQualified(path).toString())


def _file_mapper(jvm: Any) -> Any:
    """Jackson writing a FileStatus by its fields (its getters may start a process per file,
    as the local file system's owner does), each Path as its toString, without the fields
    that are objects of their own (permissions, block locations)."""
    jackson = jvm.com.fasterxml.jackson
    visibility = jackson.annotation.JsonAutoDetect.Visibility
    mapper = jackson.databind.ObjectMapper()
    mapper.setVisibility(jackson.annotation.PropertyAccessor.ALL, visibility.NONE)
    mapper.setVisibility(jackson.annotation.PropertyAccessor.FIELD, visibility.ANY)
    mapper.setSerializationInclusion(jackson.annotation.JsonInclude.Include.NON_NULL)
    module = jackson.databind.module.SimpleModule()
    path_class = jvm.java.lang.Class.forName("org.apache.hadoop.fs.Path")
    module.addSerializer(path_class, jackson.databind.ser.std.ToStringSerializer.instance)
    mapper.registerModule(module)
    for ignored in (
        "org.apache.hadoop.fs.permission.FsPermission",
        "org.apache.hadoop.fs.BlockLocation",
        "[Lorg.apache.hadoop.fs.BlockLocation;",
    ):
        mapper.configOverride(jvm.java.lang.Class.forName(ignored)).setIsIgnoredType(True)
    return mapper


def _empty(session: SparkSession, jsession: Any) -> DataFrame:
    """What REFRESH TABLE and CREATE VIEW return: no rows, no columns."""
    return DataFrame(jsession.emptyDataFrame(), session)
