"""What a stream needs to know about its source: format, identity, columns, latest version."""

from dataclasses import dataclass, replace
from datetime import datetime

from dbt.adapters.spark_streams.streams.delta.retention import Retention
from dbt.adapters.spark_streams.streams.errors import SparkUnreachable, StreamError
from dbt.adapters.spark_streams.streams.records.netting import METADATA_COLUMNS
from dbt.adapters.spark_streams.streams.sql.catalog import (
    CatalogEntry,
    column_names,
    column_types,
    detailed_info,
    quoted_name,
    reader_label,
    spell_columns,
    table_properties,
)
from dbt.adapters.spark_streams.streams.sql.run import RunSql

CDF_PROPERTY = "delta.enableChangeDataFeed"
# The columns Delta's Change Data Feed adds to each change it reports.
CHANGE_FEED_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")


@dataclass(frozen=True)
class SourceVersion:
    """One committed version of a source and when it was committed."""

    version: int
    timestamp: datetime

    @classmethod
    def from_history(cls, row: dict) -> "SourceVersion":
        """The version a DESCRIBE HISTORY row describes."""
        return cls(int(row["version"]), row["timestamp"])

    @property
    def timestamp_text(self) -> str:
        return self.timestamp.strftime("%Y-%m-%d %H:%M:%S.%f")


@dataclass(frozen=True)
class SourceTable:
    """A Delta source as a build sees it. Its table id is read only when a build needs it
    (see identity.py), so `table_id` stays empty until then. `column_types` are DESCRIBE's
    data_type strings, one per column: netting needs them for types Spark cannot compare."""

    name: str
    columns: tuple[str, ...]
    change_data_feed: bool
    retention: Retention
    table_id: str = ""
    column_types: tuple[str, ...] = ()
    location: str = ""


def describe_source(run: RunSql, entry: CatalogEntry, stream: str) -> SourceTable:
    """Format, columns and Change Data Feed state of a stream's source, from the catalog's
    `entry`. `stream` names the reader in errors: a stream's name, or the call itself
    (`changes(...)`, `for_system_time(...)`)."""
    source = inspect_source(run, entry.name, stream, entry)
    if source is None:
        if entry.is_view:
            raise StreamError(
                f"{reader_label(stream)}: source {entry.schema}.{entry.identifier} is a view; "
                "only stream() and changes() read views. Point it at the Delta table(s) the "
                "view reads."
            )
        raise StreamError(
            f"{reader_label(stream)}: source {entry.name} is not a Delta table; standard and "
            "append_only streams need a Delta table with Change Data Feed."
        )
    return source


def inspect_source(
    run: RunSql, name: str, stream: str, entry: CatalogEntry | None = None
) -> SourceTable | None:
    """The source called `name` (a quoted path) from its metadata (DESCRIBE's rows from
    `entry` when given), or None if it is not Delta.

    DESCRIBE TABLE EXTENDED and SHOW TBLPROPERTIES read the table's metadata only, where
    DESCRIBE DETAIL computes its whole state (file count, size), which costs a Spark job
    after every commit to the source.
    """
    try:
        described = entry.described if entry else run(f"describe table extended {name}")
    except SparkUnreachable:
        raise
    except Exception as exc:
        raise StreamError(
            f"{reader_label(stream)}: cannot read source {name} ({exc}). Check that the table "
            "exists and that source()/ref() points to it."
        ) from exc
    provider = detailed_info(described, "Provider")
    if provider is None:
        return None
    if provider.lower() != "delta":
        raise StreamError(
            f"{reader_label(stream)}: source {name} is a {provider} table; standard and "
            "append_only streams need a Delta table with Change Data Feed. Read its new files "
            "with stream(..., mode='insert_only'), or convert it with `CONVERT TO DELTA` (or "
            "recreate it `USING delta`)."
        )
    columns = column_names(described)
    _check_column_names(stream, name, columns)
    properties = table_properties(run, name)
    return SourceTable(
        name=name,
        columns=columns,
        change_data_feed=str(properties.get(CDF_PROPERTY, "false")).lower() == "true",
        retention=Retention.from_properties(properties),
        column_types=column_types(described),
        location=detailed_info(described, "Location") or "",
    )


def source_table_id(run: RunSql, source: SourceTable) -> SourceTable:
    """The source with its Delta table id, which tells a recreated or replaced table apart."""
    [detail] = run(f"describe detail {quoted_name(source.name)}")
    return replace(source, table_id=str(detail["id"]))


def _check_column_names(stream: str, name: str, columns: tuple[str, ...]) -> None:
    """Refuse, before anything is written, source columns no stream can carry: Spark's and
    Delta's errors for them come late (at a change read, or at the source's next UPDATE) or
    not at all (a model selecting other columns hides the clash)."""
    for column in columns:
        if "`" in column:
            raise StreamError(
                f"{reader_label(stream)}: column {column!r} of source {name} contains a backtick. "
                "Delta cannot write change data for such a column (UPDATE, DELETE and MERGE fail "
                "with INVALID_ATTRIBUTE_NAME_SYNTAX), so no stream can follow it. Rename the "
                "column."
            )
        clash = _reserved_name_clash(column)
        if clash:
            raise StreamError(
                f"{reader_label(stream)}: column {column!r} of source {name} {clash}"
            )


def _reserved_name_clash(column: str) -> str | None:
    """Why a column named like one a stream adds, or one of the change feed's, cannot be
    followed. Spark compares names case-insensitively, so every spelling clashes; Delta
    reserves only the change feed's exact names, and refuses the feed on a table with one."""
    lowered = column.lower()
    fix = "Rename the column in the source."
    if lowered in METADATA_COLUMNS:
        return (
            f"has the name of the stream's own {lowered} column (Spark compares names "
            "case-insensitively), so the stream's rows would hold two columns Spark cannot tell "
            f"apart (AMBIGUOUS_REFERENCE). {fix}"
        )
    if lowered not in CHANGE_FEED_COLUMNS:
        return None
    if column == lowered:
        return (
            f"has the name of the change feed's own {column} column, and Delta refuses to turn "
            f"the Change Data Feed on for a table with such a column, so no stream can follow "
            f"it. {fix}"
        )
    return (
        f"has the name of the change feed's own {lowered} column (Spark compares names "
        "case-insensitively), so every change read, and with the feed on Delta's own UPDATE, "
        f"DELETE and MERGE of the source, fails with AMBIGUOUS_REFERENCE. {fix}"
    )


def spelled_key(reader: str, unique_key: tuple[str, ...], source: SourceTable) -> tuple[str, ...]:
    """The key columns spelled as the source spells them; an error naming any that is missing.

    Spark resolves names case-insensitively, so `ID` names the column `id`. The row id hashes
    the key's name with its value, so only the source's spelling gives every stream keyed on
    the same column the same row ids.
    """
    fix = "Name key columns of the source table."
    return spell_columns(
        reader_label(reader), unique_key, source.columns, f"source {source.name}", fix
    )


def latest_version(run: RunSql, source: str) -> SourceVersion:
    """The newest committed version: what a build pins and reads up to."""
    [latest] = run(f"describe history {source} limit 1")
    return SourceVersion.from_history(latest)


def enable_change_data_feed(source: str) -> str:
    """The statement turning Change Data Feed on; changes before its commit stay unavailable."""
    return f"alter table {source} set tblproperties ({CDF_PROPERTY} = true)"


def enable_command(source: str) -> str:
    """The statement a user runs when the adapter may not turn CDF on itself."""
    return f"ALTER TABLE {source} SET TBLPROPERTIES ({CDF_PROPERTY} = true)"
