"""The view, a kind of stream source: a stream or changes() on a view whose query the change
algebra can follow (docs/concepts/contract.md, streams on views).

The view's definition is validated and expanded first (views/definition.py), before anything
is read or written. Each base table then gets its own table stream, named `<stream>@<table>`,
read as any table stream is (table_stream.py): pinned once per build, checked for staleness and
identity, Change Data Feed and retention prepared, and its offset recorded in the build. So
every table offset moves in the target's one commit, with the stream's own record, which
keeps the view's fingerprint: a view redefined since the stream was created is refused until
`--full-refresh` recreates the stream. The rows are the view's changes between the tables'
offsets and pins (views/algebra.py), netted as a table stream's are.
"""

from dataclasses import replace
from typing import Any

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.consumers import check_consumer, registered
from dbt.adapters.spark_streams.streams.kinds.delta_table import DELTA_TABLE
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest, stream_record
from dbt.adapters.spark_streams.streams.kinds.table_stream import resolve_with_source
from dbt.adapters.spark_streams.streams.kinds.view_path import (
    consider_rebuild,
    offer_column_ranges,
    plan_view_read,
)
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.records.netting import (
    Snapshot,
    append_only_sql,
    empty_sql,
    initial_rows_sql,
    net_changes_sql,
)
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry, column_names
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote_path
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest, StreamLookup
from dbt.adapters.spark_streams.streams.travel.changes_on_views import view_changes_sql
from dbt.adapters.spark_streams.streams.views.algebra import (
    TABLE_STREAM_SEPARATOR,
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
from dbt.adapters.spark_streams.streams.views.pruning import Prunes


class ViewKind:
    """A view over Delta tables (projections, filters, inner joins, UNION ALL)."""

    source_type = "view"

    def claims(self, source: CatalogEntry, mode: str | None) -> bool:
        return source.is_view

    def stream(
        self,
        run: RunSql,
        registry: Registry,
        build: StreamBuild,
        request: StreamRequest,
        source: CatalogEntry,
    ) -> str:
        return resolve_view_stream(run, registry, build, request)

    def changes(
        self,
        run: RunSql,
        pins: dict[str, SourceVersion],
        find_stream: StreamLookup,
        request: ChangesRequest,
        source: CatalogEntry,
    ) -> str:
        return view_changes_sql(run, pins, find_stream, request)

    def status(self, run: RunSql, registry: Registry, record: StreamRecord) -> dict[str, Any]:
        """Stale when the view no longer passes validation or was redefined; its tables'
        readability is that of its table streams (`<name>@<table>`), listed too."""
        schema, identifier = (part.strip("`") for part in record.source_table.split("`.`"))
        try:
            view = read_view_definition(run, schema, identifier, record.name)
        except StreamError as exc:
            return {"stale": True, "stale_after": None, "stale_reason": exc.msg.strip()}
        if view.fingerprint != record.source_id:
            reason = f"view {view.name} (or a view it reads) was redefined"
            return {"stale": True, "stale_after": None, "stale_reason": reason}
        return {"stale": False, "stale_after": None, "stale_reason": ""}

    def dropped(self, run: RunSql, registry: Registry, record: StreamRecord) -> None:
        """A view stream's table streams (`<name>@<table>`) hold its offsets: they go with
        it, each in a commit of its own."""
        prefix = record.name + TABLE_STREAM_SEPARATOR
        for table_stream in registry.all():
            if table_stream.name.startswith(prefix):
                registry.drop(table_stream.name)


VIEW = ViewKind()


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
    if build.dry_run == "--empty":
        return _empty_run_sql(run, request)
    view = read_view_definition(run, request.schema, request.identifier, request.name)
    key = spelled_view_key(f"Stream {request.name}", request.unique_key, view.columns, view.name)
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
    reads_changes = not (build.dry_run or (creating and request.start is None))
    key_ranges = build.config.key_ranges if build.config is not None else None
    read = plan_view_read(run, key_ranges, view, intervals) if reads_changes else None
    snapshot = _snapshot(request, view, intervals)
    prunes = read.prunes if read is not None else {}
    sql = _rows_sql(request, snapshot, view, intervals, creating, bool(build.dry_run), prunes)
    if read is not None and not creating and build.consuming:
        consider_rebuild(run, build, request.name, read, sql, initial_rows_sql(snapshot))
        offer_column_ranges(build, request.name, read)
    if not build.dry_run:
        build.reads[request.name] = (_record(build, request, view, intervals, existing), sql)
        build.view_rows[request.name] = initial_rows_sql(snapshot)
    return sql


def _empty_run_sql(run: RunSql, request: StreamRequest) -> str:
    """dbt's --empty: no rows, in the stream's columns. The view is read as it stands and not
    checked: dbt has just made it (and the views it reads) over `limit 0` inputs, which no
    stream follows; the next run without the flag makes it again before the stream reads it."""
    name = quote_path(request.schema, request.identifier)
    columns = tuple(column_names(run(f"describe table extended {name}")))
    view = f"{request.schema}.{request.identifier}"
    key = spelled_view_key(f"Stream {request.name}", request.unique_key, columns, view)
    rows = f"select * from {name}"
    return empty_sql(Snapshot(name, columns, key, 0, "1970-01-01 00:00:00", relation=rows))


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
        entry = CatalogEntry(run, schema, identifier)
        _, source = resolve_with_source(run, registry, build, sub, DELTA_TABLE, entry)
        pin = build.pins[source.name]
        offset = _offset(run, request, source, pin, before, creating)
        intervals[table] = TableInterval(source, offset, pin)
    if len(view.tables) > 1:  # a base table's changes join the other tables in full
        build.change_rows = None
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
    return DELTA_TABLE.first_version(run, source, request.start, request.start_at) - 1


def _snapshot(
    request: StreamRequest, view: ViewDefinition, intervals: dict[str, TableInterval]
) -> Snapshot:
    """The view's rows with every table at its pin."""
    latest = _latest_pin(intervals)
    return Snapshot(
        view.name, view.columns, request.unique_key, latest.version, latest.timestamp_text,
        relation=f"select * from ({view_state_sql(view, intervals, pinned=True)}) "
        f"as _view({column_list(view.columns)})",
    )  # fmt: skip


def _rows_sql(
    request: StreamRequest,
    snapshot: Snapshot,
    view: ViewDefinition,
    intervals: dict[str, TableInterval],
    creating: bool,
    dry_run: bool,
    prunes: dict[int, Prunes],
) -> str:
    if dry_run:
        return empty_sql(snapshot)
    if creating and request.start is None:
        return initial_rows_sql(snapshot) if request.show_initial_rows else empty_sql(snapshot)
    append_only = request.mode == "append_only"
    change = view_change_range(view, request.unique_key, intervals, append_only, prunes)
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
    source = (quote_path(request.schema, request.identifier), view.fingerprint, VIEW.source_type)
    return stream_record(build, request, source, latest, existing)
