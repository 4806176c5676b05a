"""A file-based table (Parquet, CSV, JSON, ... over a folder) as an insert-only stream sees it:
its columns, its location, and the files in it.

The files are those Spark's `binaryFile` source lists, with only each file's path, size and
modification time: Spark lists the folder (as the table's own reads do, skipping `_` and `.`
files). A build lists the folder once, into a temporary view of the session (`list_folder`),
which its statements then read. As SQL that view reads binaryFile again at each use, in a
Spark job whose tasks look up every file; on the embedded session the cursor answers the
same statement on the driver instead (session/driver/file_listing.py), so the view holds the one
listing the build's own read of the table also uses. A partitioned table whose partitions the
catalog manages reads only the partitions registered there, so the listing keeps only their
files: a file in a folder the table does not list yet is left for the build after `MSCK
REPAIR TABLE`.
"""

import hashlib
from dataclasses import dataclass

from dbt.adapters.spark_streams.streams.errors import SparkUnreachable, StreamError
from dbt.adapters.spark_streams.streams.sql.catalog import (
    column_names,
    column_types,
    detailed_info,
    is_view,
)
from dbt.adapters.spark_streams.streams.sql.quoting import quote, quote_path, string_literal
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql

FILES_SOURCE_TYPE = "files"
PARTITION_SECTION = "# Partition Information"
# Ends the REFRESH TABLE that comes just before a folder's listing (the cursor may answer both).
LISTING_FOLLOWS = "/* dbt_spark_streams:listing_follows */"
# A folder's files as Spark's binaryFile source lists them, without their content.
BINARY_LISTING = "select path, length as size, modificationTime as modified from binaryFile."
LISTING_VIEW_PREFIX = "_spark_streams_files_"


@dataclass(frozen=True)
class FileTable:
    """A file-based source: `partitions` are the catalog's partition folders (`k=v/...`),
    or None when the table reads every folder under its location."""

    name: str
    provider: str
    location: str
    columns: tuple[str, ...]
    column_types: tuple[str, ...]
    partitions: tuple[str, ...] | None

    @property
    def listing_view(self) -> str:
        """The temporary view of the folder's listing: one per folder in a session."""
        return LISTING_VIEW_PREFIX + hashlib.sha1(self.location.encode()).hexdigest()[:16]

    def refresh_sql(self) -> str:
        """Spark caches a file table's listing per session; REFRESH TABLE drops that cache, so
        the build reads the files as they are now (a file rewritten in place included)."""
        return f"refresh table {self.name} {LISTING_FOLLOWS}"

    def listing_view_sql(self) -> str:
        """The statement listing the folder into the listing view."""
        listing = f"{BINARY_LISTING}{quote(self.location)}"
        return f"create or replace temporary view {self.listing_view} as {listing}"

    def listing_sql(self) -> str:
        """The files the table reads, as its build listed them: path, size, modified (one row
        per file)."""
        listing = f"select path, size, modified from {self.listing_view}"
        if self.partitions is None:
            return listing
        return f"{listing} where {self._in_listed_folder()}"

    def unlisted_sql(self) -> str | None:
        """How many files sit in partition folders the catalog does not list (yet)."""
        if self.partitions is None:
            return None
        return (
            f"select count(*) as files from {self.listing_view} "
            f"where not ({self._in_listed_folder()})"
        )

    def _in_listed_folder(self) -> str:
        """Whether a listed file's partition folder, relative to the location (`k=v` or
        `a=1/b=2`), is one the catalog registers (none registered: no file is)."""
        prefix = string_literal(self.location.rstrip("/") + "/")
        folder = f"regexp_replace(substring(path, length({prefix}) + 1), '/[^/]*$', '')"
        folders = ", ".join(string_literal(name) for name in self.partitions or ()) or "null"
        return f"{folder} in ({folders})"


def describe_file_table(run: RunSql, schema: str, identifier: str, stream: str) -> FileTable:
    """The file table `schema.identifier`; an error naming the fix for anything else."""
    name = quote_path(schema, identifier)
    try:
        described = run(f"describe table extended {name}")
        provider = (detailed_info(described, "Provider") or "").lower()
    except SparkUnreachable:
        raise
    except Exception as exc:
        raise StreamError(
            f"Stream {stream}: cannot read source {name} ({exc}). Check that the table exists "
            "and that source()/ref() points to it."
        ) from exc
    if not provider and is_view(run, schema, identifier):
        raise StreamError(
            f"Stream {stream}: source {schema}.{identifier} is a view; mode 'insert_only' reads "
            "the new files of a file-based table. Use mode 'standard' or 'append_only' on a view."
        )
    if provider == "delta":
        raise StreamError(
            f"Stream {stream}: source {name} is a Delta table; mode 'insert_only' reads the new "
            "files of a file-based table (Parquet, CSV, JSON, ...). Use mode='append_only' for "
            "the rows inserted into a Delta table since the offset."
        )
    location = detailed_info(described, "Location")
    if not provider or provider == "hive" or not location:
        raise StreamError(
            f"Stream {stream}: source {name} is not a file-based table with a location (provider "
            f"{provider or 'unknown'}); mode 'insert_only' needs a table created `USING parquet` "
            "(or csv, json, orc, ...) `LOCATION '...'`."
        )
    return FileTable(
        name=name,
        provider=provider,
        location=location,
        columns=column_names(described),
        column_types=column_types(described),
        partitions=_catalog_partitions(run, name, described),
    )


def _catalog_partitions(run: RunSql, name: str, described: list[Row]) -> tuple[str, ...] | None:
    """The partition folders the catalog registers, for a partitioned table whose partitions
    the catalog manages; None when the table lists its folder itself."""
    partitioned = any(str(row["col_name"]) == PARTITION_SECTION for row in described)
    if not partitioned or detailed_info(described, "Partition Provider") != "Catalog":
        return None
    return tuple(str(row["partition"]) for row in run(f"show partitions {name}"))


def list_folder(run: RunSql, table: FileTable, stream: str) -> None:
    """List the table's folder for this build into its listing view, just after refreshing
    the table, so that the listing and the build's read of the table see the same files."""
    read_listing(run, table, stream, table.refresh_sql())
    read_listing(run, table, stream, table.listing_view_sql())


def read_listing(run: RunSql, table: FileTable, stream: str, sql: str) -> list[Row]:
    """Run a query over the table's listing; a location that no longer exists is an error
    naming the fix (Spark's own says only PATH_NOT_FOUND)."""
    try:
        return run(sql)
    except Exception as exc:
        if "PATH_NOT_FOUND" not in str(exc):
            raise
        raise StreamError(
            f"Stream {stream}: the location {table.location} of source {table.name} no longer "
            "exists, so its files cannot be listed. Restore the folder, or point the table at "
            "its new location and rebuild the consumer with --full-refresh."
        ) from exc


def unlisted_warning(run: RunSql, table: FileTable, stream: str) -> list[str]:
    """A warning when files wait in partition folders the table does not list yet."""
    sql = table.unlisted_sql()
    files = int(read_listing(run, table, stream, sql)[0]["files"]) if sql else 0
    if not files:
        return []
    return [
        f"Stream {stream}: {files} file(s) under {table.location} are in partition folders "
        f"that {table.name} does not list, so no stream reads them yet. Register the folders "
        f"(MSCK REPAIR TABLE {table.name}, or ALTER TABLE ... ADD PARTITION) and the next "
        "build consumes them."
    ]
