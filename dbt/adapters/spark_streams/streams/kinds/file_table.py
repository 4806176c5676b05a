"""The file-based table (Parquet, CSV, JSON, ... over a folder), a kind of stream source: an
insert-only `stream()` reads the rows of its new files (docs/concepts/contract.md,
`insert_only`).

The stream's offset is the set of files it has consumed (files/sets.py). A build lists the
table's files once (its pin, files/table.py's `list_folder`), takes those not in the
committed set as new, and reads only them: up to LITERAL_FILES are named in the read, which
lets Spark open just those files; beyond that the read joins the build's own set. A consuming
build writes its new set (usually a part of the files it names, continuing the old set) just
before its target's write, and the stream's record, which names the set, moves in the
target's commit like every offset here. Nothing is netted: every row of a new file is an
INSERT (with a unique_key, the row of the newest file per key).
"""

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.files import sets as file_sets
from dbt.adapters.spark_streams.streams.files.sets import (
    FileEntry,
    FileSet,
    FileSets,
    new_set_id,
)
from dbt.adapters.spark_streams.streams.files.table import (
    FILES_SOURCE_TYPE,
    FileTable,
    describe_file_table,
    list_folder,
    unlisted_warning,
)
from dbt.adapters.spark_streams.streams.kinds.consumers import check_consumer, registered
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest, stream_record
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.records.column_types import row_type
from dbt.adapters.spark_streams.streams.records.netting import key_hash, row_json_sql
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry, spell_columns
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, string_literal
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest, StreamLookup

LITERAL_FILES = 500
FILE_COLUMN = "_spark_streams_file"
MODIFIED_COLUMN = "_spark_streams_modified"
# A file's path as the folder's listing (and so the file set) spells it. `_metadata.file_path`
# is the file's URI, percent-encoded (`it's%20here`); Spark's binaryFile listing gives the path
# decoded (`it's here`). A `+` stays a plus in both, so it is kept from url_decode, which would
# read it as a space. Without this a folder with a space in its path was never read.
METADATA_PATH = "url_decode(replace(_metadata.file_path, '+', '%2B'))"
METADATA_FILE = f"({METADATA_PATH}, _metadata.file_size, _metadata.file_modification_time)"


@dataclass(frozen=True)
class FilePlan:
    """What a build does with the table's files: which it consumes (`consume`, over a
    listing's `l.path`, `l.size`, `l.modified`), which it records unread (`skip`), and the
    filter of its read (over the table's `_metadata`)."""

    consume: str
    skip: str
    read_filter: str
    pending: int
    named: tuple[FileEntry, ...] = ()  # the files consumed, when the read names them


class FileTableKind:
    """A table over a folder of files, read by insert_only streams only."""

    source_type = FILES_SOURCE_TYPE

    def claims(self, source: CatalogEntry, mode: str | None) -> bool:
        """Every insert_only stream: its description names what is wrong with a source that
        is no file table."""
        return mode == "insert_only"

    def stream(
        self,
        run: RunSql,
        registry: Registry,
        build: StreamBuild,
        request: StreamRequest,
        source: CatalogEntry,
    ) -> str:
        return resolve_file_stream(run, registry, build, request)

    def changes(
        self,
        run: RunSql,
        pins: dict[str, SourceVersion],
        find_stream: StreamLookup,
        request: ChangesRequest,
        source: CatalogEntry,
    ) -> str:
        raise StreamError(
            f"{request.label}: a file table has no versions to read changes between; read its "
            "new files with stream(..., mode='insert_only')."
        )

    def status(self, run: RunSql, registry: Registry, record: StreamRecord) -> dict[str, Any]:
        """Stale when the table no longer reads the folder (or the folder is gone) its file
        set was listed from; an insert-only stream never expires."""
        schema, identifier = (part.strip("`") for part in record.source_table.split("`.`"))
        try:
            table = describe_file_table(run, schema, identifier, record.name)
            list_folder(run, table, record.name)
            committed = FileSets.of(registry).committed(record.name, record.source_id)
            if committed.location != table.location:
                reason = f"{table.name} now reads {table.location}, not {committed.location}"
                return {"stale": True, "stale_after": None, "stale_reason": reason}
        except StreamError as exc:
            return {"stale": True, "stale_after": None, "stale_reason": exc.msg.strip()}
        return {"stale": False, "stale_after": None, "stale_reason": ""}

    def dropped(self, run: RunSql, registry: Registry, record: StreamRecord) -> None:
        """A dropped stream's file sets go too."""
        run(FileSets.of(registry).drop_sql(record.name))


FILE_TABLE = FileTableKind()


def resolve_file_stream(
    run: RunSql, registry: Registry, build: StreamBuild, request: StreamRequest
) -> str:
    """The SQL of the rows of the files new since the stream's offset; records the offset
    (a new file set) a consuming build moves to."""
    if request.name in build.reads:
        return build.reads[request.name][1]
    _check_request(request)
    table = describe_file_table(run, request.schema, request.identifier, request.name)
    key = spell_columns(
        f"Stream {request.name}", request.unique_key, table.columns, f"source {table.name}",
        "Name key columns of the source table.",
    )  # fmt: skip
    request = replace(request, unique_key=key)
    if build.dry_run:
        return file_rows_sql(table, request.unique_key, "false")
    sets = FileSets.of(registry)
    list_folder(run, table, request.name)
    existing = registered(registry, build, request.name)
    creating = check_consumer(build, request, existing) or existing is None
    creating = creating or build.recreates_streams
    old_id = None if creating or existing is None else _old_set_id(request, existing)
    new_id = new_set_id()
    plan, header = _plan(sets, table, request, old_id, new_id if build.consuming else None)
    old = None if old_id is None else _committed(sets, request, table, old_id, header)
    build.warnings.extend(unlisted_warning(run, table, request.name))
    moves = creating or plan.pending > 0
    build.moves = build.moves or moves
    build.only_appends = False  # one key may come in several files
    build.only_deletes = False
    build.change_rows = None  # files carry no row counts the listing reads
    renews = _renews(old, existing)
    extends = old is not None and bool(plan.named) and not renews
    if moves and build.consuming:
        build.source_writes.extend(_set_writes(sets, table, request, old, new_id, plan, renews))
    set_id = _next_set_id(old, new_id, moves, extends)
    generation = _generation(existing, creating, moves)
    sql = file_rows_sql(table, request.unique_key, plan.read_filter)
    pin = SourceVersion(generation, datetime.now())
    record = stream_record(build, request, (table.name, set_id, FILES_SOURCE_TYPE), pin, existing)
    build.reads[request.name] = (record, sql)
    return sql


def _check_request(request: StreamRequest) -> None:
    if request.every_version:
        raise StreamError(
            f"Stream {request.name}: incremental_strategy 'history' keeps the versions of a "
            "Delta table's rows; an insert_only stream's rows are new files' rows, each once. "
            "Use incremental_strategy 'append' (or apply_changes with a unique_key)."
        )
    if request.start is not None and "timestamp" not in request.start:
        which = "at" if request.start_at else "before"
        raise StreamError(
            f"Stream {request.name}: a file table has no versions; give "
            f"{which}={{'timestamp': 'YYYY-MM-DD HH:MM:SS'}} (the files modified after it)."
        )


def _old_set_id(request: StreamRequest, existing: StreamRecord) -> str:
    """The file set a committed offset names (an insert-only stream's source_id)."""
    if existing.source_type != FILES_SOURCE_TYPE:
        raise StreamError(
            f"Stream {request.name} was created on {existing.source_table} as a "
            f"{existing.source_type} stream in mode {existing.mode}; it cannot continue as an "
            "insert_only stream. Rebuild the consumer with --full-refresh to recreate it."
        )
    return existing.source_id


def _committed(
    sets: FileSets, request: StreamRequest, table: FileTable, set_id: str, found: FileSet | None
) -> FileSet:
    """The committed offset's file set, if it is stored and the source still reads the folder
    it lists."""
    committed = sets.required(request.name, set_id, found)
    if committed.location != table.location:
        raise StreamError(
            f"Stream {request.name} is stale: source {table.name} now reads {table.location}, "
            f"but the stream's offset lists the files of {committed.location} (the table was "
            "dropped and recreated, or altered, over another folder). Rebuild the consumer with "
            "--full-refresh to start the stream over on the new folder."
        )
    return committed


def _plan(
    sets: FileSets,
    table: FileTable,
    request: StreamRequest,
    old_id: str | None,
    new_id: str | None,
) -> tuple[FilePlan, FileSet | None]:
    """The files this build consumes: every file not in the old set, or for a new stream
    every file (show_initial_rows), none, or those modified after its `at` / `before`; and
    the old set's stored header, read by the same query."""
    creating = old_id is None
    candidate, skip = _new_stream_files(request) if creating else ("true", "false")
    if candidate == "false":
        return FilePlan("false", skip, "false", 0), None
    pending, header = sets.pending(table, request.name, old_id, candidate, LITERAL_FILES + 1)
    if not pending:
        return FilePlan("false", skip, "false", 0), header
    if len(pending) <= LITERAL_FILES:
        named = ", ".join(entry.literal() for entry in pending)
        return FilePlan(
            f"(l.path, l.size, l.modified) in ({named})", skip, f"{METADATA_FILE} in ({named})",
            len(pending), tuple(pending),
        ), header  # fmt: skip
    if new_id is None:  # a peek: what is not in the old set
        read = f"{METADATA_FILE} not in ({sets.files_of(request.name, old_id)})"
        on_metadata = candidate.replace("l.modified", "_metadata.file_modification_time")
        return FilePlan(candidate, skip, f"{read} and ({on_metadata})", len(pending)), header
    read = f"{METADATA_FILE} in ({sets.consumed_now(request.name, new_id)})"
    return FilePlan(candidate, skip, read, len(pending)), header


def _new_stream_files(request: StreamRequest) -> tuple[str, str]:
    """(consumed, skipped) for a new stream: every file present, none, or those modified
    after the `at` point (at or after a `before` point)."""
    if request.start is not None:
        point = f"timestamp{string_literal(str(request.start['timestamp']))}"
        after = f"l.modified > {point}" if request.start_at else f"l.modified >= {point}"
        return after, f"not ({after})"
    if request.show_initial_rows:
        return "true", "false"
    return "false", "true"


def _renews(old: FileSet | None, existing: StreamRecord | None) -> bool:
    """Whether the build's set starts a new chain from a listing and deletes the parts written
    well before the old set: every CLEANUP_EVERY-th set, and a set of CLEANUP_EVERY parts."""
    if old is None or existing is None:
        return True
    turn = (existing.offset_version + 1) % file_sets.CLEANUP_EVERY == 0
    return turn or old.parts >= file_sets.CLEANUP_EVERY


def _next_set_id(old: FileSet | None, new_id: str, moves: bool, extends: bool) -> str:
    """The set the stream's record names after the build: the old one when nothing moves, the
    old one continued by the build's part, or the build's new chain."""
    if old is not None and not moves:
        return old.set_id
    return file_sets.chained(old.set_id, new_id) if old is not None and extends else new_id


def _set_writes(
    sets: FileSets,
    table: FileTable,
    request: StreamRequest,
    old: FileSet | None,
    new_id: str,
    plan: FilePlan,
    renews: bool,
) -> list[tuple[str, str]]:
    """The new part's write: the files the read names, continuing the old set; or a new
    chain's first part from the listing (a first set, one of many files, every
    CLEANUP_EVERY-th set), with the cleanup of old parts when the chain is renewed."""
    message = f"Stream {request.name}: recording its file set ({plan.pending} new)"
    if old is not None and plan.named and not renews:
        return [(sets.extend_sql(table, request.name, new_id, list(plan.named)), message)]
    old_id = old.set_id if old else None
    writes = [
        (sets.write_sql(table, request.name, old_id, new_id, plan.consume, plan.skip), message)
    ]
    if old is not None and renews:
        writes.append(
            (sets.cleanup_sql(request.name, old), f"Stream {request.name}: old file sets")
        )
    return writes


def _generation(existing: StreamRecord | None, creating: bool, moves: bool) -> int:
    """The stream's offset_version: how many file sets it has committed since its creation."""
    if creating or existing is None:
        return 0
    return existing.offset_version + (1 if moves else 0)


def file_rows_sql(table: FileTable, unique_key: tuple[str, ...], read_filter: str) -> str:
    """The stream rows of the table's files that pass `read_filter`: INSERTs whose commit
    timestamp is their file's modification time. The row id hashes the key, or the file's
    path, the row's values and their occurrence in the file (stable across re-reads)."""
    columns = column_list(table.columns)
    read = (
        f"select {columns}, {METADATA_PATH} as {FILE_COLUMN}, "
        f"_metadata.file_modification_time as {MODIFIED_COLUMN} from {table.name} "
        f"where {read_filter}"
    )
    if unique_key:
        key = row_type(table.columns, table.column_types, unique_key)
        newest = (
            f"row_number() over (partition by {row_json_sql(key)} "
            f"order by {MODIFIED_COLUMN} desc, {FILE_COLUMN} desc)"
        )
        return (
            f"select {_output(columns, key_hash(key))} from (select *, {newest} as _newest "
            f"from ({read})) where _newest = 1"
        )
    values = row_json_sql(row_type(table.columns, table.column_types))
    occurrence = f"row_number() over (partition by {FILE_COLUMN}, {values} order by 1)"
    row_id = f"sha1(concat({FILE_COLUMN}, '#', {values}, '#', {occurrence}))"
    return f"select {_output(columns, row_id)} from ({read})"


def _output(columns: str, row_id: str) -> str:
    return (
        f"{columns}, 'INSERT' as metadata_action, false as metadata_isupdate, {row_id} as "
        "metadata_row_id, cast(null as bigint) as metadata_commit_version, "
        f"{MODIFIED_COLUMN} as metadata_commit_timestamp"
    )
