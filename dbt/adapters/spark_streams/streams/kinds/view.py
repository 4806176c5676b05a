"""Resolve a `stream()` call on a view (SPEC section 5).

The view's definition is validated and expanded first (view_definition.py), before anything
is read or written. Each base table then gets its own table stream, named `<stream>@<table>`,
resolved as any table stream is (resolve.py): pinned once per build, checked for staleness and
identity, Change Data Feed and retention prepared, and its offset recorded in the build. So
every table offset moves in the target's one commit, with the stream's own record, which
keeps the view's fingerprint: a view redefined since the stream was created is refused until
`--full-refresh` recreates the stream. The rows are the view's changes between the tables'
offsets and pins (view_changes.py), netted as a table stream's are.
"""

from dataclasses import replace

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.delta_table import DeltaTable
from dbt.adapters.spark_streams.streams.kinds.resolve import (
    StreamRequest,
    check_consumer,
    registered,
    resolve_with_source,
    stream_record,
)
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.records.netting import (
    Snapshot,
    append_only_sql,
    empty_sql,
    initial_rows_sql,
    net_changes_sql,
)
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote_path
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.views.algebra import (
    TableInterval,
    table_stream_name,
    view_change_range,
    view_state_sql,
)
from dbt.adapters.spark_streams.streams.views.definition import (
    ViewDefinition,
    read_view_definition,
    spelled_view_key,
)

VIEW_SOURCE_TYPE = "view"


def resolve_view_stream(
    run: RunSql, registry: Registry, build: StreamBuild, request: StreamRequest
) -> str:
    """The SQL of a view stream's changes since its offsets; records every offset the build
    moves to (the view's record and one per base table)."""
    if request.name in build.reads:
        return build.reads[request.name][1]
    if request.mode not in ("standard", "append_only"):
        raise StreamError(
            f"Stream {request.name}: mode {request.mode!r} is not supported on views; use "
            "standard or append_only."
        )
    _check_start(request)
    if request.every_version:
        raise StreamError(
            f"Stream {request.name}: incremental_strategy 'history' reads table streams only; a "
            f"view stream's rows are the net change of view {request.schema}."
            f"{request.identifier}. Keep the history of its tables, or use apply_changes."
        )
    view = read_view_definition(run, request.schema, request.identifier, request.name)
    key = spelled_view_key(f"Stream {request.name}", request.unique_key, view)
    request = replace(request, unique_key=key)
    existing = None if build.dry_run else registered(registry, build, request.name)
    creating = check_consumer(build, request, existing) or existing is None
    creating = creating or build.recreates_streams
    if existing is not None and not creating and existing.source_id != view.fingerprint:
        raise StreamError(
            f"Stream {request.name} is stale: view {view.name} (or a view it reads) was "
            "redefined since the stream was created, so its offsets no longer describe the "
            "view's rows. Rebuild the consumer with --full-refresh to recreate the stream."
        )
    intervals = _table_intervals(run, registry, build, request, view, creating)
    sql = _rows_sql(request, view, intervals, creating, build.dry_run)
    if not build.dry_run:
        build.reads[request.name] = (_record(build, request, view, intervals, existing), sql)
    return sql


def _check_start(request: StreamRequest) -> None:
    """A view has no versions of its own: a start point is a moment, applied to every table."""
    if request.start is not None and "version" in request.start:
        which = "at" if request.start_at else "before"
        raise StreamError(
            f"Stream {request.name}: {which}={{'version': ...}} names a version of one table, "
            f"and view {request.schema}.{request.identifier} has none of its own; give "
            f"{which}={{'timestamp': 'YYYY-MM-DD HH:MM:SS'}} (every base table as of that time)."
        )


def _table_intervals(
    run: RunSql,
    registry: Registry,
    build: StreamBuild,
    request: StreamRequest,
    view: ViewDefinition,
    creating: bool,
) -> dict[str, TableInterval]:
    """Each base table's offset and pin, through its own table stream."""
    intervals = {}
    for table in dict.fromkeys(view.tables):
        schema, identifier = table.replace("`", "").split(".", 1)
        sub = replace(
            request,
            name=table_stream_name(request.name, table),
            schema=schema,
            identifier=identifier,
            mode="standard",
            unique_key=(),
            other_consumers=(),
        )
        before = None if creating else registered(registry, build, sub.name)
        _, source = resolve_with_source(run, registry, build, sub)
        build.change_rows = None  # a base table's changes join the other tables in full
        pin = build.pins[source.name]
        offset = _offset(run, request, source, pin, before, creating)
        intervals[table] = TableInterval(source, offset, pin)
    return intervals


def _offset(
    run: RunSql,
    request: StreamRequest,
    source: SourceTable,
    pin: SourceVersion,
    before: StreamRecord | None,
    creating: bool,
) -> int:
    """Where the view stream reads a table from: its table stream's offset, or for a new
    stream its pin (or the version before `at` / `before`)."""
    if not creating:
        if before is None:
            raise StreamError(
                f"Stream {request.name}: the offset on {source.name} is missing from the "
                "registry. Rebuild the consumer with --full-refresh to recreate the stream."
            )
        return int(before.offset_version)
    if request.start is None:
        return pin.version
    return DeltaTable().first_version(run, source, request.start, request.start_at) - 1


def _rows_sql(
    request: StreamRequest,
    view: ViewDefinition,
    intervals: dict[str, TableInterval],
    creating: bool,
    dry_run: bool,
) -> str:
    latest = _latest_pin(intervals)
    snapshot = Snapshot(
        view.name, view.columns, request.unique_key, latest.version, latest.timestamp_text,
        relation=f"select * from ({view_state_sql(view, intervals, pinned=True)}) "
        f"as _view({column_list(view.columns)})",
    )  # fmt: skip
    if dry_run:
        return empty_sql(snapshot)
    if creating and request.start is None:
        return initial_rows_sql(snapshot) if request.show_initial_rows else empty_sql(snapshot)
    append_only = request.mode == "append_only"
    change = view_change_range(view, request.unique_key, intervals, append_only)
    return append_only_sql(change) if append_only else net_changes_sql(change)


def _latest_pin(intervals: dict[str, TableInterval]) -> SourceVersion:
    """The pin committed last among the base tables'."""
    return max((interval.pin for interval in intervals.values()), key=lambda pin: pin.timestamp)


def _record(
    build: StreamBuild,
    request: StreamRequest,
    view: ViewDefinition,
    intervals: dict[str, TableInterval],
    existing: StreamRecord | None,
) -> StreamRecord:
    """The view stream's own record: its fingerprint as the source id; the newest table pin
    as its offset (the table streams hold the offsets that count)."""
    latest = _latest_pin(intervals)
    source = (quote_path(request.schema, request.identifier), view.fingerprint, VIEW_SOURCE_TYPE)
    return stream_record(build, request, source, latest, existing)
