"""Resolve a `stream()` call: pin the source, find the offset, and build the change-set SQL.

A build pins each source's latest version on first use and reuses the pin, and a stream read
twice in one build returns the SQL of the first read, so every reference sees the same rows.
"""

from dataclasses import dataclass, replace
from datetime import datetime

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.delta.appends import only_appends, only_deletes
from dbt.adapters.spark_streams.streams.delta.change_size import add_rows, change_rows
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion, spelled_key
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.delta_table import DeltaTable
from dbt.adapters.spark_streams.streams.kinds.source_kind import VERSIONS, SourceKind
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.records.netting import Snapshot
from dbt.adapters.spark_streams.streams.sql.run import RunSql

DELTA_TABLE = DeltaTable()


@dataclass(frozen=True)
class StreamRequest:
    """The arguments of one `stream()` call."""

    name: str
    schema: str
    identifier: str
    mode: str
    unique_key: tuple[str, ...]
    show_initial_rows: bool
    start: dict | None
    start_at: bool  # True for at=, False for before=
    other_consumers: tuple[str, ...] = ()
    every_version: bool = False  # a history consumer's stream: every version, not netted

    @property
    def rows_mode(self) -> str:
        """The mode its rows are read in: a standard stream of a history consumer reads every
        version."""
        return VERSIONS if self.every_version and self.mode == "standard" else self.mode


def resolve_stream(
    run: RunSql,
    registry: Registry,
    build: StreamBuild,
    request: StreamRequest,
    kind: SourceKind = DELTA_TABLE,
) -> str:
    """The SQL of the stream's changes since its offset; records the offset a consuming
    build moves to. What depends on the kind of source is asked of `kind`.

    A read writes nothing: the source writes a consumer needs are planned for its commit.
    """
    if request.name in build.reads:
        return build.reads[request.name][1]
    return resolve_with_source(run, registry, build, request, kind)[0]


def resolve_with_source(
    run: RunSql,
    registry: Registry,
    build: StreamBuild,
    request: StreamRequest,
    kind: SourceKind = DELTA_TABLE,
) -> tuple[str, SourceTable]:
    """resolve_stream's work for a stream the build has not read yet, and the source it
    described (a view stream reads its base tables' columns from it)."""
    _check_mode(request, kind)
    if build.dry_run:
        return _no_rows(run, build, request, kind)
    source = kind.describe(run, request.schema, request.identifier, request.name)
    existing = registered(registry, build, request.name)
    if check_consumer(build, request, existing):
        existing = None  # taken over: the stream starts over, as if new
    request = _check_key(request, source)
    creating = existing is None or build.recreates_streams
    appended = False
    if existing is not None and not creating:
        history = _read_history(run, build, source, existing, kind)
        appends = only_appends(history)
        build.only_appends = build.only_appends and appends
        build.only_deletes = build.only_deletes and only_deletes(history)
        bound = change_rows(history) if kind is DELTA_TABLE else None
        build.change_rows = add_rows(build.change_rows, bound)
        appended = bool(history.commits) and appends
        source = kind.check_same(run, request.name, existing, source, history)
        build.warnings.extend(
            kind.check_readable(
                run,
                build.schema_reads,
                request.name,
                source,
                existing,
                history,
                build.consuming,
            )
        )
    else:
        source = kind.identify(run, source)
        build.only_appends = False  # a new stream's initial rows may hold any key
        build.only_deletes = False
        build.change_rows = None  # and are the whole table
    source = _prepare_source(build, request, source, creating, kind)
    pin = _pin(run, build, source, kind)
    snapshot = _snapshot(request, source, pin)
    if existing is None or creating:
        sql = _new_stream(run, request, source, snapshot, kind)
        build.moves = True
    else:
        first = existing.offset_version + 1
        sql = kind.changes_sql(_read_mode(request, appended), snapshot, first)
        build.moves = build.moves or pin.version > existing.offset_version
    build.reads[request.name] = (_record(build, request, source, pin, existing, kind), sql)
    return sql, source


def _read_mode(request: StreamRequest, appended: bool) -> str:
    """The mode the changes are read in. A keyed standard stream whose source only gained
    rows since its offset reads them as append_only does: with a unique key each appended
    row is its key's net change (an INSERT), so the netting's window is skipped; the rows,
    row ids and commit columns are the same."""
    if request.rows_mode == "standard" and request.unique_key and appended:
        return "append_only"
    return request.rows_mode


def _no_rows(
    run: RunSql, build: StreamBuild, request: StreamRequest, kind: SourceKind
) -> tuple[str, SourceTable]:
    """dbt's --empty: the stream's columns and no rows; no offset is read or recorded."""
    source = kind.describe(run, request.schema, request.identifier, request.name)
    request = _check_key(request, source)
    return kind.empty_sql(_snapshot(request, source, _pin(run, build, source, kind))), source


def registered(registry: Registry, build: StreamBuild, name: str) -> StreamRecord | None:
    """The stream's registry record, read once per build (reconciliation may have read it)."""
    if name not in build.registered:
        build.registered[name] = registry.get(name)
    return build.registered[name]


def _read_history(
    run: RunSql,
    build: StreamBuild,
    source: SourceTable,
    existing: StreamRecord,
    kind: SourceKind,
) -> CommitsSinceOffset:
    """The source's history since the stream's offset; the same read pins the source."""
    history = kind.history(run, source, existing, build.pins.get(source.name))
    if history.latest is not None:
        build.pins.setdefault(source.name, history.latest)
    return history


def _prepare_source(
    build: StreamBuild,
    request: StreamRequest,
    source: SourceTable,
    creating: bool,
    kind: SourceKind,
) -> SourceTable:
    """Plan the source writes a consumer needs (for a Delta table: Change Data Feed on,
    retention extended), once per source and build.

    They run in build.finish, after every check of the build and just before its write,
    so a build rejected for bad input writes nothing. The stream's offset is the pin taken
    before them; the next build reads their (empty) commits like any other.
    """
    if source.name in build.prepared:
        return source
    build.prepared.add(source.name)
    source, writes = kind.prepare(
        request.name,
        source,
        creating,
        build.consuming,
        build.auto_enable_change_tracking,
        build.max_data_extension_days,
    )
    build.source_writes.extend(writes)
    return source


def _pin(run: RunSql, build: StreamBuild, source: SourceTable, kind: SourceKind) -> SourceVersion:
    """The source version this build reads up to, taken on first use."""
    if source.name not in build.pins:
        build.pins[source.name] = kind.latest(run, source)
    return build.pins[source.name]


def _check_mode(request: StreamRequest, kind: SourceKind) -> None:
    if request.mode not in kind.modes:
        raise StreamError(
            f"Stream {request.name}: mode {request.mode!r} is not supported on {kind.label}; "
            f"use one of {', '.join(kind.modes)}."
        )


def check_consumer(
    build: StreamBuild, request: StreamRequest, existing: StreamRecord | None
) -> bool:
    """Refuse a second consumer; True when this build takes over a stream whose consumer is
    no longer a stream_incremental model of the project (it then starts the stream over)."""
    if not build.consuming:
        return False
    others = list(request.other_consumers)
    owner = existing.consumer if existing is not None else None
    taking_over = owner not in (None, build.consumer, *others) and _owner_gone(build, owner)
    if owner not in (None, build.consumer, *others) and not taking_over:
        others.append(str(owner))
    if others:
        raise StreamError(
            f"Stream {request.name} is consumed by {', '.join(others)}; {build.consumer} cannot "
            "consume it too (one consumer per stream). Give one of them its own stream with "
            "stream(..., name='another_name'), or peek from a non-incremental model."
        )
    if taking_over:
        _take_over(build, request, str(owner))
    return taking_over


def _owner_gone(build: StreamBuild, owner: str | None) -> bool:
    """Whether the stream's consumer has left the project (deleted, renamed, or no longer a
    stream_incremental model). Unknown when the caller could not list the project's models."""
    return bool(build.project_consumers) and owner not in build.project_consumers


def _take_over(build: StreamBuild, request: StreamRequest, owner: str) -> None:
    """A model takes over a stream whose consumer is gone. Its target never held the stream's
    rows, so the stream starts over (as on a first build); a target that already exists must
    be rebuilt for that, or it would mix the stream's rows with whatever it holds."""
    if build.target_exists and not build.full_refresh:
        raise StreamError(
            f"Stream {request.name} belonged to {owner}, which is no longer in the project. "
            f"{build.consumer} can take it over by starting it again from the source's current "
            "rows, which needs its target rebuilt: run it once with --full-refresh (or drop the "
            f"stream with `dbt run-operation drop_stream --args '{{name: {request.name}}}'`)."
        )
    build.warnings.append(
        f"Stream {request.name}: taken over by {build.consumer} from {owner}, which is no "
        "longer in the project; the stream starts again from the source's current rows."
    )


def _check_key(request: StreamRequest, source: SourceTable) -> StreamRequest:
    """The request with its key columns spelled as the source spells them."""
    return replace(request, unique_key=spelled_key(request.name, request.unique_key, source))


def _snapshot(request: StreamRequest, source: SourceTable, pin: SourceVersion) -> Snapshot:
    return Snapshot(
        source.name,
        source.columns,
        request.unique_key,
        pin.version,
        pin.timestamp_text,
        source.column_types,
        source.location,
    )


def _new_stream(
    run: RunSql, request: StreamRequest, source: SourceTable, snapshot: Snapshot, kind: SourceKind
) -> str:
    """A stream created now: initial rows, nothing, or the changes since `at`/`before`."""
    if request.start is not None:
        first = kind.first_version(run, source, request.start, request.start_at)
        if not 0 <= first <= snapshot.version + 1:
            raise StreamError(
                f"Stream {request.name}: start {request.start!r} is outside the history of "
                f"{source.name}, whose versions run from 0 to {snapshot.version}."
            )
        return kind.changes_sql(request.rows_mode, snapshot, first)
    if request.show_initial_rows:
        return kind.initial_rows_sql(snapshot)
    return kind.empty_sql(snapshot)


def _record(
    build: StreamBuild,
    request: StreamRequest,
    source: SourceTable,
    pin: SourceVersion,
    existing: StreamRecord | None,
    kind: SourceKind,
) -> StreamRecord:
    return stream_record(build, request, (source.name, source.table_id, kind.source_type), pin,
                         existing)  # fmt: skip


def stream_record(
    build: StreamBuild,
    request: StreamRequest,
    source: tuple[str, str, str],
    pin: SourceVersion,
    existing: StreamRecord | None,
) -> StreamRecord:
    """The record a build moves a stream to: `source` is its (table, id, type), `pin` its new
    offset; a stream keeps its creation time unless the build recreates it."""
    now = datetime.now()
    keep_created = existing is not None and not build.full_refresh
    source_table, source_id, source_type = source
    return StreamRecord(
        name=request.name,
        schema=build.schema,
        source_table=source_table,
        source_id=source_id,
        source_type=source_type,
        mode=request.mode,
        unique_key=request.unique_key,
        consumer=build.consumer or "",
        target_table=build.target,
        offset_version=pin.version,
        offset_timestamp=pin.timestamp,
        txn_version=existing.txn_version if existing else 0,
        created_on=existing.created_on if keep_created and existing else now,
        last_consumed_on=now,
    )
