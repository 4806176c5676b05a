"""What a stream needs to know about its source: format, identity, columns, latest version."""

from dataclasses import dataclass
from datetime import datetime

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.retention import Retention
from dbt.adapters.spark_streams.streams.runner import RunSql
from dbt.adapters.spark_streams.streams.sql import quote_path, string_literal

CDF_PROPERTY = "delta.enableChangeDataFeed"


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
    """A Delta source as a build sees it."""

    name: str
    table_id: str
    columns: tuple[str, ...]
    change_data_feed: bool
    retention: Retention


def describe_source(run: RunSql, schema: str, identifier: str, stream: str) -> SourceTable:
    """Format, table id, columns and Change Data Feed state of a stream's source."""
    try:
        return describe_detail(run, quote_path(schema, identifier), stream)
    except StreamError as exc:
        if is_view(run, schema, identifier):
            raise StreamError(
                f"Stream {stream}: source {schema}.{identifier} is a view; streams on views are "
                "not supported yet. Point stream() at the Delta table(s) the view reads."
            ) from exc
        raise


def describe_detail(run: RunSql, name: str, stream: str) -> SourceTable:
    """The source called `name` (a quoted path), as DESCRIBE DETAIL and DESCRIBE see it."""
    try:
        [detail] = run(f"describe detail {name}")
    except Exception as exc:
        raise StreamError(
            f"Stream {stream}: cannot read source {name} ({exc}). Check that the table exists "
            "and that source()/ref() points to it."
        ) from exc
    if str(detail.get("format")).lower() != "delta":
        raise StreamError(
            f"Stream {stream}: source {name} is a {detail.get('format')} table; standard and "
            "append_only streams need a Delta table with Change Data Feed. Convert it with "
            "`CONVERT TO DELTA` or recreate it `USING delta`."
        )
    properties = detail.get("properties") or {}
    columns = table_columns(run, name)
    _check_column_names(stream, name, columns)
    return SourceTable(
        name=name,
        table_id=str(detail["id"]),
        columns=columns,
        change_data_feed=str(properties.get(CDF_PROPERTY, "false")).lower() == "true",
        retention=Retention.from_properties(properties),
    )


def _check_column_names(stream: str, name: str, columns: tuple[str, ...]) -> None:
    """Backticks in column names break Delta's change data writes, so say so up front."""
    for column in columns:
        if "`" in column:
            raise StreamError(
                f"Stream {stream}: column {column!r} of source {name} contains a backtick. Delta "
                "cannot write change data for such a column (UPDATE, DELETE and MERGE fail with "
                "INVALID_ATTRIBUTE_NAME_SYNTAX), so no stream can follow it. Rename the column."
            )


def is_view(run: RunSql, schema: str, identifier: str) -> bool:
    """Whether the name is a view (permanent or temporary) rather than a missing table."""
    try:
        views = run(f"show views in {quote_path(schema)} like {string_literal(identifier)}")
    except Exception:
        return False
    return any(row.get("viewName") == identifier for row in views)


def table_columns(run: RunSql, name: str) -> tuple[str, ...]:
    """Column names in table order; DESCRIBE's partition and detail sections are skipped."""
    columns = []
    for row in run(f"describe table {name}"):
        column = row["col_name"]
        if not column or column.startswith("#"):
            break
        columns.append(column)
    return tuple(columns)


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
