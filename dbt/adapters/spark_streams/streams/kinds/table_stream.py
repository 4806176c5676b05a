"""A stream on one table with versions: pin the source, find the offset, and build the change
SQL. The Delta table kind reads its streams this way, and so does a view stream for each of its
tables; another kind of versioned table (an Iceberg table, say) would implement TableSource and
read its streams through the same flow.

A build pins each source's latest version on first use and reuses the pin, and a stream read
twice in one build returns the SQL of the first read, so every reference sees the same rows.
"""

from dataclasses import replace
from typing import Protocol

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.delta.appends import only_appends, only_deletes
from dbt.adapters.spark_streams.streams.delta.change_size import add_rows, change_rows
from dbt.adapters.spark_streams.streams.delta.schema_changes import SchemaReads
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion, spelled_key
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.consumers import check_consumer, registered
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest, stream_record
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.records.netting import Snapshot
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import RunSql

SourceWrite = tuple[str, str]
"""A statement a consuming build runs on the source before its write, and what to log."""


class TableSource(Protocol):
    """A source with versions, as the table-stream flow reads it."""

    source_type: str  # recorded with the stream (dbt_streams.source_type)
    modes: tuple[str, ...]  # the stream modes this kind supports
    label: str  # in errors: "mode 'x' is not supported on <label>"

    def describe(self, run: RunSql, entry: CatalogEntry, stream: str) -> SourceTable:
        """The source's columns and properties, from the catalog's `entry`; an error naming
        the fix if it cannot be one."""
        ...

    def identify(self, run: RunSql, source: SourceTable) -> SourceTable:
        """The source with the id that tells a recreated source apart (for a new stream)."""
        ...

    def latest(self, run: RunSql, source: SourceTable) -> SourceVersion:
        """The newest state: what a build pins and reads up to."""
        ...

    def history(
        self, run: RunSql, source: SourceTable, offset: StreamRecord, pin: SourceVersion | None
    ) -> CommitsSinceOffset:
        """What was committed since the stream's offset (up to `pin` when given)."""
        ...

    def check_same(
        self,
        run: RunSql,
        stream: str,
        offset: StreamRecord,
        source: SourceTable,
        history: CommitsSinceOffset,
    ) -> SourceTable:
        """The source, if it is still the one the offset was taken from; else an error."""
        ...

    def check_readable(
        self,
        run: RunSql,
        reads: SchemaReads,
        stream: str,
        source: SourceTable,
        offset: StreamRecord,
        history: CommitsSinceOffset,
        consuming: bool,
    ) -> list[str]:
        """An error if the changes since the offset cannot be read (stale, schema changes a
        read cannot cross); else warnings (changes about to leave retention)."""
        ...

    def check_start(
        self,
        run: RunSql,
        reads: SchemaReads,
        stream: str,
        source: SourceTable,
        versions: tuple[int, int],
        consumer: str,
        consuming: bool,
    ) -> None:
        """An error if a new stream's first read (`versions`, first to pin, from `at` or
        `before`) crosses a schema change it cannot read; see check_readable."""
        ...

    def prepare(
        self,
        stream: str,
        source: SourceTable,
        creating: bool,
        consuming: bool,
        auto_enable: bool,
        extension_days: int,
    ) -> tuple[SourceTable, list[SourceWrite]]:
        """The source writes a consuming build needs before its streams can be read."""
        ...

    def first_version(self, run: RunSql, source: SourceTable, point: dict, at: bool) -> int:
        """The first version a new stream reads from `at` / `before` `point`."""
        ...

    def changes_sql(self, mode: str, snapshot: Snapshot, first: int) -> str:
        """The stream's rows for the changes from `first` to the snapshot's version (`mode`
        VERSIONS: every version, not netted, for a history consumer)."""
        ...

    def initial_rows_sql(self, snapshot: Snapshot) -> str:
        """Every row of the snapshot, as INSERTs (a new stream with show_initial_rows)."""
        ...

    def empty_sql(self, snapshot: Snapshot) -> str:
        """The stream's columns and no rows."""
        ...


def resolve_stream(
    run: RunSql,
    registry: Registry,
    build: StreamBuild,
    request: StreamRequest,
    table: TableSource,
    entry: CatalogEntry,
) -> str:
    """The SQL of the stream's changes since its offset; records the offset a consuming
    build moves to. What depends on the kind of table is asked of `table`.

    A read writes nothing: the source writes a consumer needs are planned for its commit.
    """
    if request.name in build.reads:
        return build.reads[request.name][1]
    return resolve_with_source(run, registry, build, request, table, entry)[0]


def resolve_with_source(
    run: RunSql,
    registry: Registry,
    build: StreamBuild,
    request: StreamRequest,
    table: TableSource,
    entry: CatalogEntry,
) -> tuple[str, SourceTable]:
    """resolve_stream's work for a stream the build has not read yet, and the source it
    described (a view stream reads its base tables' columns from it)."""
    _check_mode(request, table)
    if build.dry_run:
        return _no_rows(run, build, request, table, entry)
    source = table.describe(run, entry, request.name)
    existing = registered(registry, build, request.name)
    if check_consumer(build, request, existing):
        existing = None  # taken over: the stream starts over, as if new
    request = _check_key(request, source)
    creating = existing is None or build.recreates_streams
    if existing is None or creating:
        source, appended = _identify_new(run, build, source, table), False
    else:
        source, appended = _check_since_offset(run, build, request, source, existing, table)
    source = _prepare_source(build, request, source, creating, table)
    pin = _pin(run, build, source, table)
    snapshot = _snapshot(request, source, pin)
    if existing is None or creating:
        sql = _new_stream(run, build, request, source, snapshot, table)
        build.moves = True
    else:
        first = existing.offset_version + 1
        sql = table.changes_sql(_read_mode(request, appended), snapshot, first)
        build.moves = build.moves or pin.version > existing.offset_version
    build.reads[request.name] = (_record(build, request, source, pin, existing, table), sql)
    return sql, source


def _identify_new(
    run: RunSql, build: StreamBuild, source: SourceTable, table: TableSource
) -> SourceTable:
    """A stream created now: its source's id, and a change set of unknown shape and size."""
    build.only_appends = False  # a new stream's initial rows may hold any key
    build.only_deletes = False
    build.change_rows = None  # and are the whole table
    return table.identify(run, source)


def _check_since_offset(
    run: RunSql,
    build: StreamBuild,
    request: StreamRequest,
    source: SourceTable,
    existing: StreamRecord,
    table: TableSource,
) -> tuple[SourceTable, bool]:
    """An existing stream: its source checked from the history since its offset (still the
    same table, still readable), what that history says of the change set (appends only,
    deletes only, its size), and whether the source only gained rows."""
    history = _read_history(run, build, source, existing, table)
    appends = only_appends(history)
    build.only_appends = build.only_appends and appends
    build.only_deletes = build.only_deletes and only_deletes(history)
    build.change_rows = add_rows(build.change_rows, change_rows(history))
    source = table.check_same(run, request.name, existing, source, history)
    warnings = table.check_readable(
        run, build.schema_reads, request.name, source, existing, history, build.consuming
    )
    build.warnings.extend(warnings)
    return source, bool(history.commits) and appends


def _read_mode(request: StreamRequest, appended: bool) -> str:
    """The mode the changes are read in. A keyed standard stream whose source only gained
    rows since its offset reads them as append_only does: with a unique key each appended
    row is its key's net change (an INSERT), so the netting's window is skipped; the rows,
    row ids and commit columns are the same."""
    if request.rows_mode == "standard" and request.unique_key and appended:
        return "append_only"
    return request.rows_mode


def _no_rows(
    run: RunSql,
    build: StreamBuild,
    request: StreamRequest,
    table: TableSource,
    entry: CatalogEntry,
) -> tuple[str, SourceTable]:
    """dbt's --empty: the stream's columns and no rows; no offset is read or recorded."""
    source = table.describe(run, entry, request.name)
    request = _check_key(request, source)
    return table.empty_sql(_snapshot(request, source, _pin(run, build, source, table))), source


def _read_history(
    run: RunSql,
    build: StreamBuild,
    source: SourceTable,
    existing: StreamRecord,
    table: TableSource,
) -> CommitsSinceOffset:
    """The source's history since the stream's offset; the same read pins the source."""
    history = table.history(run, source, existing, build.pins.get(source.name))
    if history.latest is not None:
        build.pins.setdefault(source.name, history.latest)
    return history


def _prepare_source(
    build: StreamBuild,
    request: StreamRequest,
    source: SourceTable,
    creating: bool,
    table: TableSource,
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
    source, writes = table.prepare(
        request.name,
        source,
        creating,
        build.consuming,
        build.auto_enable_change_tracking,
        build.max_data_extension_days,
    )
    build.source_writes.extend(writes)
    return source


def _pin(
    run: RunSql, build: StreamBuild, source: SourceTable, table: TableSource
) -> SourceVersion:
    """The source version this build reads up to, taken on first use."""
    if source.name not in build.pins:
        build.pins[source.name] = table.latest(run, source)
    return build.pins[source.name]


def _check_mode(request: StreamRequest, table: TableSource) -> None:
    if request.mode not in table.modes:
        raise StreamError(
            f"Stream {request.name}: mode {request.mode!r} is not supported on {table.label}; "
            f"use one of {', '.join(table.modes)}."
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
    run: RunSql,
    build: StreamBuild,
    request: StreamRequest,
    source: SourceTable,
    snapshot: Snapshot,
    table: TableSource,
) -> str:
    """A stream created now: initial rows, nothing, or the changes since `at`/`before`."""
    if request.start is not None:
        first = table.first_version(run, source, request.start, request.start_at)
        if not 0 <= first <= snapshot.version + 1:
            raise StreamError(
                f"Stream {request.name}: start {request.start!r} is outside the history of "
                f"{source.name}, whose versions run from 0 to {snapshot.version}."
            )
        if not build.dry_run and first <= snapshot.version:
            versions, consumer = (first, snapshot.version), build.consumer or ""
            table.check_start(
                run, build.schema_reads, request.name, source, versions, consumer, build.consuming
            )
        return table.changes_sql(request.rows_mode, snapshot, first)
    if request.show_initial_rows:
        return table.initial_rows_sql(snapshot)
    return table.empty_sql(snapshot)


def _record(
    build: StreamBuild,
    request: StreamRequest,
    source: SourceTable,
    pin: SourceVersion,
    existing: StreamRecord | None,
    table: TableSource,
) -> StreamRecord:
    return stream_record(build, request, (source.name, source.table_id, table.source_type), pin,
                         existing)  # fmt: skip
