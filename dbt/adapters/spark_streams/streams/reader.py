"""Resolve a `stream()` call: pin the source, find the offset, and build the change-set SQL.

A build pins each source's latest version on first use and reuses the pin, and a stream read
twice in one build returns the SQL of the first read, so every reference sees the same rows.
"""

from dataclasses import dataclass, field, replace
from datetime import datetime

from dbt.adapters.spark_streams.streams.changes import (
    ChangeRange,
    Snapshot,
    append_only_sql,
    empty_sql,
    initial_rows_sql,
    net_changes_sql,
)
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.identity import same_source
from dbt.adapters.spark_streams.streams.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.retention import retention_extension
from dbt.adapters.spark_streams.streams.runner import RunSql
from dbt.adapters.spark_streams.streams.schema_changes import SchemaReads, check_schema_changes
from dbt.adapters.spark_streams.streams.source import (
    SourceTable,
    SourceVersion,
    describe_source,
    enable_change_data_feed,
    enable_command,
    latest_version,
    source_table_id,
)
from dbt.adapters.spark_streams.streams.staleness import (
    PendingCommits,
    check_readable,
    expiry_warning,
    pending_commits,
)

MODES = ("standard", "append_only")


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
    start_inclusive: bool
    other_consumers: tuple[str, ...] = ()


@dataclass
class StreamBuild:
    """One model's build: its pins and the streams it read. A peek has no consumer."""

    consumer: str | None
    schema: str
    target: str
    target_exists: bool
    full_refresh: bool
    auto_enable_change_tracking: bool
    max_data_extension_days: int = 0
    dry_run: bool = False
    project_consumers: frozenset[str] = frozenset()
    last_txn_version: int = 0
    warnings: list[str] = field(default_factory=list)
    prepared: set[str] = field(default_factory=set)
    source_writes: list[tuple[str, str]] = field(default_factory=list)
    registered: dict[str, StreamRecord | None] = field(default_factory=dict)
    committed: tuple[StreamRecord, ...] = ()
    moves: bool = False
    pins: dict[str, SourceVersion] = field(default_factory=dict)
    reads: dict[str, tuple[StreamRecord, str]] = field(default_factory=dict)
    schema_reads: SchemaReads = field(default_factory=SchemaReads)

    @property
    def pending(self) -> bool:
        """Whether a write is due: a stream is created or its source has new commits. A dry
        run (dbt's --empty) has nothing to write to a target that exists."""
        return not self.dry_run and (self.moves or not self.reads)

    @property
    def consuming(self) -> bool:
        return self.consumer is not None


def read_stream(
    run: RunSql, registry: Registry, build: StreamBuild, request: StreamRequest
) -> str:
    """The SQL of the stream's pending changes; records the offset a consuming build moves to.

    A read writes nothing: the source writes a consumer needs are planned for its commit.
    """
    if request.name in build.reads:
        return build.reads[request.name][1]
    _check_mode(request)
    if build.dry_run:
        return _no_rows(run, build, request)
    existing = _registered(registry, build, request.name)
    if _check_consumer(build, request, existing):
        existing = None  # taken over: the stream starts over, as if new
    source = describe_source(run, request.schema, request.identifier, request.name)
    request = _check_key(request, source)
    creating = existing is None or _recreates(build)
    if existing is not None and not creating:
        pending = _pending(run, build, source, existing)
        source = same_source(run, request.name, existing, source, pending)
        _check_fresh(build, request, source, pending)
        check_schema_changes(
            run, build.schema_reads, request.name, pending, existing.consumer, build.consuming
        )
    else:
        source = source_table_id(run, source)
    source = _prepare_source(build, request, source, creating)
    pin = _pin(run, build, source.name)
    if existing is None or creating:
        sql = _new_stream(run, request, source, pin)
        build.moves = True
    else:
        sql = _pending_changes(request, source, existing, pin)
        build.moves = build.moves or pin.version > existing.offset_version
    build.reads[request.name] = (_record(build, request, source, pin, existing), sql)
    return sql


def _no_rows(run: RunSql, build: StreamBuild, request: StreamRequest) -> str:
    """dbt's --empty: the stream's columns and no rows; no offset is read or recorded."""
    source = describe_source(run, request.schema, request.identifier, request.name)
    request = _check_key(request, source)
    return empty_sql(_snapshot(request, source, _pin(run, build, source.name)))


def _registered(registry: Registry, build: StreamBuild, name: str) -> StreamRecord | None:
    """The stream's registry record, read once per build (reconciliation may have read it)."""
    if name not in build.registered:
        build.registered[name] = registry.get(name)
    return build.registered[name]


def _pending(
    run: RunSql, build: StreamBuild, source: SourceTable, existing: StreamRecord
) -> PendingCommits:
    """The source's history since the stream's offset; the same read pins the source."""
    pinned = build.pins.get(source.name)
    pending = pending_commits(
        run,
        source.name,
        existing.offset_version,
        existing.offset_timestamp,
        pin=pinned.version if pinned else None,
    )
    if pending.latest is not None:
        build.pins.setdefault(source.name, pending.latest)
    return pending


def _check_fresh(
    build: StreamBuild, request: StreamRequest, source: SourceTable, pending: PendingCommits
) -> None:
    """Fail a stale stream; warn when its pending changes are about to leave retention."""
    check_readable(request.name, pending, source.retention, source.change_data_feed)
    warning = expiry_warning(request.name, pending, source.retention)
    if warning:
        build.warnings.append(warning)


def _prepare_source(
    build: StreamBuild, request: StreamRequest, source: SourceTable, creating: bool
) -> SourceTable:
    """Plan the source writes a consumer needs: Change Data Feed on, retention extended.

    They run in commit_stream_build, after every check of the build and just before its write,
    so a build rejected for bad input writes nothing. The stream's offset is the pin taken
    before them; the next build reads their (empty) commits like any other.
    """
    if source.name in build.prepared:
        return source
    build.prepared.add(source.name)
    if not source.change_data_feed:
        if not (creating and build.consuming and build.auto_enable_change_tracking):
            raise StreamError(
                f"Stream {request.name}: source {source.name} does not have Change Data Feed on, "
                "and streams read changes from it. Run:\n  "
                f"{enable_command(source.name)}\nor let a consuming build do it "
                "(config auto_enable_change_tracking: true, the default). Changes made before it "
                "is on are never available."
            )
        build.source_writes.append(
            (enable_change_data_feed(source.name), f"{source.name}: Change Data Feed turned on")
        )
        source = replace(source, change_data_feed=True)
    if build.consuming and build.max_data_extension_days:
        statement, changes = retention_extension(
            source.name, source.retention, build.max_data_extension_days
        )
        if statement:
            build.source_writes.append((statement, "; ".join(changes)))
    return source


def _pin(run: RunSql, build: StreamBuild, source: str) -> SourceVersion:
    """The source version this build reads up to, taken on first use."""
    if source not in build.pins:
        build.pins[source] = latest_version(run, source)
    return build.pins[source]


def _recreates(build: StreamBuild) -> bool:
    """A full refresh, or a consumer's first build, (re)creates every stream it reads."""
    return build.full_refresh or (build.consuming and not build.target_exists)


def _check_mode(request: StreamRequest) -> None:
    if request.mode not in MODES:
        raise StreamError(
            f"Stream {request.name}: mode {request.mode!r} is not supported on Delta tables; "
            f"use one of {', '.join(MODES)}."
        )


def _check_consumer(
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
    """The request with its key columns spelled as the source spells them.

    Spark resolves names case-insensitively, so `ID` names the column `id`. The row id hashes
    the key's name with its value, so only the source's spelling gives every stream keyed on
    the same column the same row ids.
    """
    spelling = {column.lower(): column for column in source.columns}
    missing = [key for key in request.unique_key if key.lower() not in spelling]
    if missing:
        raise StreamError(
            f"Stream {request.name}: unique_key column(s) {', '.join(missing)} not in source "
            f"{source.name} (columns: {', '.join(source.columns)}). Name key columns of the "
            "source table."
        )
    key = tuple(dict.fromkeys(spelling[column.lower()] for column in request.unique_key))
    return replace(request, unique_key=key)


def _snapshot(request: StreamRequest, source: SourceTable, pin: SourceVersion) -> Snapshot:
    return Snapshot(
        source.name,
        source.columns,
        request.unique_key,
        pin.version,
        pin.timestamp_text,
        source.column_types,
    )


def _new_stream(
    run: RunSql, request: StreamRequest, source: SourceTable, pin: SourceVersion
) -> str:
    """A stream created now: initial rows, nothing, or the changes since `at`/`before`."""
    snapshot = _snapshot(request, source, pin)
    if request.start is not None:
        first = resolve_start(run, source.name, request.start, request.start_inclusive)
        if not 0 <= first <= pin.version + 1:
            raise StreamError(
                f"Stream {request.name}: start {request.start!r} is outside the history of "
                f"{source.name}, whose versions run from 0 to {pin.version}."
            )
        return _changes(request, source, first, pin.version, snapshot)
    if request.show_initial_rows:
        return initial_rows_sql(snapshot)
    return empty_sql(snapshot)


def _pending_changes(
    request: StreamRequest, source: SourceTable, existing: StreamRecord, pin: SourceVersion
) -> str:
    snapshot = _snapshot(request, source, pin)
    return _changes(request, source, existing.offset_version + 1, pin.version, snapshot)


def _changes(
    request: StreamRequest, source: SourceTable, first: int, last: int, snapshot: Snapshot
) -> str:
    change = ChangeRange(
        source.name, source.columns, request.unique_key, first, last, source.column_types
    )
    if change.is_empty:
        return empty_sql(snapshot)
    if request.mode == "append_only":
        return append_only_sql(change)
    return net_changes_sql(change)


def resolve_start(run: RunSql, source: str, point: dict, inclusive: bool) -> int:
    """The first version a new stream reads from `at` (inclusive) or `before` (exclusive)."""
    try:
        return _first_version(run, source, point, inclusive)
    except ValueError as exc:
        raise StreamError(
            f"Stream start {point!r} on {source}: {exc}. Give {{'version': n}} or "
            "{'timestamp': 'YYYY-MM-DD HH:MM:SS'}."
        ) from exc


def _first_version(run: RunSql, source: str, point: dict, inclusive: bool) -> int:
    if "version" in point:
        version = int(point["version"])
        return version if inclusive else version + 1
    if "timestamp" in point:
        moment = datetime.fromisoformat(str(point["timestamp"]))
        history = run(f"describe history {source}")
        later = [
            int(row["version"])
            for row in history
            if row["timestamp"] > moment or (inclusive and row["timestamp"] == moment)
        ]
        return min(later) if later else latest_version(run, source).version + 1
    raise StreamError(
        f"Stream start {point!r} on {source}: give {{'version': n}} or {{'timestamp': '...'}}."
    )


def _record(
    build: StreamBuild,
    request: StreamRequest,
    source: SourceTable,
    pin: SourceVersion,
    existing: StreamRecord | None,
) -> StreamRecord:
    now = datetime.now()
    keep_created = existing is not None and not build.full_refresh
    return StreamRecord(
        name=request.name,
        schema=build.schema,
        source_table=source.name,
        source_id=source.table_id,
        source_type="delta",
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
