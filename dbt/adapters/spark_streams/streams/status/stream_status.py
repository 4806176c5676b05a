"""What show_streams and describe_stream print: the registry row plus staleness, now."""

from datetime import datetime
from typing import Any

from dbt.adapters.spark_streams.streams.delta.identity import with_table_id
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, inspect_source
from dbt.adapters.spark_streams.streams.delta.staleness import (
    CommitsSinceOffset,
    commits_since_offset,
    stale_after,
    stale_reason,
)
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.files.sets import FileSets
from dbt.adapters.spark_streams.streams.files.table import (
    FILES_SOURCE_TYPE,
    describe_file_table,
    read_listing,
)
from dbt.adapters.spark_streams.streams.kinds.view import VIEW_SOURCE_TYPE
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition


def stream_status(
    run: RunSql, record: StreamRecord, file_sets: FileSets | None = None
) -> dict[str, Any]:
    """The record's fields, then `stale`, `stale_after` and, when stale, `stale_reason`."""
    status: dict[str, Any] = dict(vars(record))
    if record.source_type == VIEW_SOURCE_TYPE:
        return {**status, **_view_status(run, record)}
    if record.source_type == FILES_SOURCE_TYPE:
        return {**status, **_files_status(run, record, file_sets)}
    try:
        source = inspect_source(run, record.source_table, record.name)
    except StreamError as exc:
        return {**status, "stale": True, "stale_after": None, "stale_reason": exc.msg}
    if source is None:
        reason = f"source {record.source_table} is no longer a Delta table"
        return {**status, "stale": True, "stale_after": None, "stale_reason": reason}
    pending = commits_since_offset(
        run, source.name, record.offset_version, record.offset_timestamp
    )
    if with_table_id(run, record, source, pending).table_id != record.source_id:
        reason = f"source {record.source_table} was dropped and recreated or replaced"
        return {**status, "stale": True, "stale_after": None, "stale_reason": reason}
    return {**status, **_readability(pending, source)}


def _view_status(run: RunSql, record: StreamRecord) -> dict[str, Any]:
    """A view stream is stale when its view no longer passes validation or was redefined;
    its tables' readability is that of its table streams (`<name>@<table>`), listed too."""
    schema, identifier = (part.strip("`") for part in record.source_table.split("`.`"))
    try:
        view = read_view_definition(run, schema, identifier, record.name)
    except StreamError as exc:
        return {"stale": True, "stale_after": None, "stale_reason": exc.msg.strip()}
    if view.fingerprint != record.source_id:
        reason = f"view {view.name} (or a view it reads) was redefined"
        return {"stale": True, "stale_after": None, "stale_reason": reason}
    return {"stale": False, "stale_after": None, "stale_reason": ""}


def _files_status(run: RunSql, record: StreamRecord, sets: FileSets | None) -> dict[str, Any]:
    """An insert-only stream is stale when its table no longer reads the folder (or the
    folder is gone) its file set was listed from; it never expires."""
    schema, identifier = (part.strip("`") for part in record.source_table.split("`.`"))
    try:
        table = describe_file_table(run, schema, identifier, record.name)
        read_listing(run, table, record.name, f"select count(*) from ({table.listing_sql()})")
        if sets is not None:
            committed = sets.committed(record.name, record.source_id)
            if committed.location != table.location:
                reason = f"{table.name} now reads {table.location}, not {committed.location}"
                return {"stale": True, "stale_after": None, "stale_reason": reason}
    except StreamError as exc:
        return {"stale": True, "stale_after": None, "stale_reason": exc.msg.strip()}
    return {"stale": False, "stale_after": None, "stale_reason": ""}


def _readability(pending: CommitsSinceOffset, source: SourceTable) -> dict[str, Any]:
    reason = stale_reason(pending, source.retention, source.change_data_feed)
    deadline: datetime | None = stale_after(pending, source.retention)
    if reason is None:
        return {"stale": False, "stale_after": deadline, "stale_reason": ""}
    return {"stale": True, "stale_after": deadline, "stale_reason": reason[0]}
