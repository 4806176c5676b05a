"""The adapter surface macros call for streams: Python decides, Jinja emits the SQL.

Each model build gets a StreamBuild (keyed by invocation and model), so pins and offsets live
exactly as long as the build that took them.
"""

import threading
import time
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.invocation import get_invocation_id

from dbt.adapters.spark_streams.build_response import StreamBuildResponse
from dbt.adapters.spark_streams.session.cursor import BoundConnection
from dbt.adapters.spark_streams.session.statement_confs import session_confs
from dbt.adapters.spark_streams.streams.builds.build import (
    BuildEnv,
    BuildPlan,
    StreamBuild,
    begin,
    finish,
    plan,
)
from dbt.adapters.spark_streams.streams.builds.config import (
    ConsumerConfig,
    ModelConfig,
    StreamSettings,
    as_key,
)
from dbt.adapters.spark_streams.streams.builds.faults import at_step
from dbt.adapters.spark_streams.streams.builds.key_ranges import (
    MOST_RANGES,
    can_range,
    key_ranges_sql,
    target_predicate,
    wants_ranges,
)
from dbt.adapters.spark_streams.streams.delta.source import SourceIsView, SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.files.sets import FileSets
from dbt.adapters.spark_streams.streams.files.table import FILES_SOURCE_TYPE
from dbt.adapters.spark_streams.streams.kinds.file_table import resolve_file_stream
from dbt.adapters.spark_streams.streams.kinds.resolve import StreamRequest, resolve_stream
from dbt.adapters.spark_streams.streams.kinds.view import resolve_view_stream
from dbt.adapters.spark_streams.streams.offsets.commit import (
    RunWithConfs,
    retry_on_conflict,
    sql_confs,
)
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.quoting import quote, quote_path, string_literal
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql
from dbt.adapters.spark_streams.streams.status.freshness import freshness_failures
from dbt.adapters.spark_streams.streams.status.listing import format_streams
from dbt.adapters.spark_streams.streams.status.stream_status import stream_status
from dbt.adapters.spark_streams.streams.travel.changes import (
    ChangesRequest,
    changes_sql,
    empty_changes_sql,
)
from dbt.adapters.spark_streams.streams.travel.current_valid_time import current_valid_time_sql
from dbt.adapters.spark_streams.streams.travel.for_system_time import (
    TIME_FORMAT,
    SystemTimeRequest,
    readable_history,
    system_time_sql,
)
from dbt.adapters.spark_streams.streams.travel.view_changes import (
    empty_view_changes_sql,
    view_changes_sql,
)

logger = AdapterLogger("SparkStreams")
REGISTRY_RETRIES = 3
# Marks the SQL of every stream() call, so a view built on one is recognised.
STREAM_MARKER = "/* dbt_spark_streams:stream */"
# Marks the SQL of a changes() call whose interval ends at (or starts from) the build's state.
PINNED_CHANGES_MARKER = "/* dbt_spark_streams:changes_until_build */"
SYSTEM_TIME_MARKER = "/* dbt_spark_streams:system_time */"
MAX_RECORDS_PER_FILE = "spark.sql.files.maxRecordsPerFile"


class StreamMethods(metaclass=AdapterMeta):
    """Mixed into the adapter (AdapterMeta collects its @available methods)."""

    connections: Any
    config: Any
    connection_named: Callable[..., Any]
    get_columns_in_relation: Callable[..., Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The stream state every dbt thread shares, made before any thread starts."""
        super().__init__(*args, **kwargs)
        self._stream_registry: Registry | None = None
        self._stream_builds: dict[tuple[str, str], StreamBuild] = {}
        self._declared_streams: dict[tuple[str, str], list[str]] = {}
        self._node_pins: dict[tuple[str, str], dict[str, SourceVersion]] = {}
        self._node_clock: dict[tuple[str, str], datetime] = {}
        self._stream_state_lock = threading.Lock()
        self._source_write_lock = threading.Lock()

    def run_rows(self, sql: str) -> list[Row]:
        """Run one statement and return its rows as dicts (column name to value)."""
        _, cursor = self.connections.add_query(sql, auto_begin=False)
        rows = cursor.fetchall() or []
        names = [column[0] for column in cursor.description or []]
        return [dict(zip(names, row, strict=True)) for row in rows]

    def _registry(self) -> Registry:
        """One Registry per adapter, so its table is created-if-missing once, not per read."""
        with self._stream_state_lock:
            if self._stream_registry is None:
                self._stream_registry = Registry(self.run_rows, self.config.credentials.schema)
            return self._stream_registry

    def _builds(self) -> dict[tuple[str, str], StreamBuild]:
        """The builds under way, keyed by (invocation, model): each thread has its own keys."""
        return self._stream_builds

    def _build(self, node_id: str, make: Callable[[], StreamBuild]) -> StreamBuild:
        """The model's build, made (and reconciled) on its first stream() call only."""
        key = (get_invocation_id(), node_id)
        builds = self._builds()
        if key not in builds:
            builds[key] = make()
        return builds[key]

    def _pins(self, node_id: str) -> dict[str, SourceVersion]:
        """The source versions pinned for the node in this invocation, shared by its stream()
        and changes() calls, so every reference to a source in one build sees one version."""
        return self._node_pins.setdefault((get_invocation_id(), node_id), {})

    def _now(self, node_id: str) -> datetime:
        """The node's `now`, taken once: retention_start() and for_system_time() in one build
        agree on where the readable history begins."""
        return self._node_clock.setdefault((get_invocation_id(), node_id), datetime.now())

    @available
    def declare_stream(self, node_id: str, name: str) -> list[str]:
        """At parse time: the stream names `node_id` has named so far, for its meta.

        dbt clobbers a custom config key on each config() call, so every call carries the
        whole list of the model's names.
        """
        with self._stream_state_lock:
            names = self._declared_streams.setdefault((get_invocation_id(), node_id), [])
            if name not in names:
                names.append(name)
            return list(names)

    @available
    def sql_string_literal(self, value: Any) -> str:
        """A Spark SQL string literal of `value`, for the macros: the one escaping helper.

        Not a `string_literal` macro: dbt's dispatch would pick that up for its own
        cross-database `string_literal`, whose input dbt has already escaped.
        """
        return string_literal(str(value))

    @available
    def stream_strategy_macro(self, context: dict[str, Any], strategy: str) -> Any:
        """The macro writing a build of `strategy`: `stream_<strategy>_sql`, looked up in the
        model's context as dbt's get_incremental_strategy_macro does, so a project's own macro
        of that name wins."""
        name = f"stream_{strategy}_sql"
        if name not in context:
            raise StreamError(
                f"incremental_strategy '{strategy}' has no macro {name}; define it in the "
                "project's macros (see strategies.sql)."
            )
        return context[name]

    @available
    def stream_sql(
        self,
        node_id: str,
        model_name: str,
        config: ModelConfig,
        consuming: bool,
        target: BaseRelation,
        target_exists: bool,
        full_refresh: bool,
        source: BaseRelation,
        options: dict[str, Any],
    ) -> str:
        """The change-set SQL of one `stream()` call in the model `node_id`. The model's
        first call parses its config (a consumer's is checked before any stream is read)."""
        target_name = quote_path(str(target.schema), str(target.identifier))

        def new_build() -> StreamBuild:
            consumer = ConsumerConfig.from_model_config(model_name, config) if consuming else None
            settings = (
                consumer.streams
                if consumer
                else StreamSettings.from_model_config(model_name, config)
            )
            build = StreamBuild(
                consumer=node_id if consuming else None,
                config=consumer,
                schema=str(target.schema),
                target=target_name,
                target_exists=target_exists,
                full_refresh=full_refresh,
                auto_enable_change_tracking=settings.auto_enable_change_tracking,
                max_data_extension_days=settings.max_data_extension_days,
                dry_run=bool(options.get("empty")),
                project_consumers=frozenset(options.get("stream_consumers") or ()),
                pins=self._pins(node_id),
            )
            return begin(self.run_rows, build)

        build = self._build(node_id, new_build)
        name = str(options.get("name") or f"{model_name}__{options['relation_label']}")
        request = StreamRequest(
            name=name,
            schema=str(source.schema),
            identifier=str(source.identifier),
            mode=str(options.get("mode") or "standard"),
            unique_key=_stream_key(options, build.config),
            show_initial_rows=bool(options.get("show_initial_rows", True)),
            start=_start_point(name, options),
            start_at=options.get("at") is not None,
            other_consumers=_other_consumers(node_id, options),
            every_version=consuming and build.config is not None and build.config.keeps_history,
        )
        sql = _resolve_any(self.run_rows, self._registry(), build, request)
        _log_warnings(build)
        if consuming:
            at_step("after_pin")
        return f"({STREAM_MARKER} {sql})"

    @available
    def changes_sql(self, node_id: str, source: BaseRelation, options: dict[str, Any]) -> str:
        """The SQL of one `changes()` call (streams/travel/changes.py): read-only, so it needs no
        build, only the node's pins. Its default end is the build's pin, which a view would
        keep forever: such SQL carries a marker the view materialization refuses."""
        request = ChangesRequest(
            schema=str(source.schema),
            identifier=str(source.identifier),
            at=options.get("at"),
            before=options.get("before"),
            end=options.get("end"),
            information=str(options.get("information") or "default"),
            unique_key=as_key(options.get("unique_key")),
        )
        try:
            if options.get("empty"):
                return f"({empty_changes_sql(self.run_rows, request)})"
            sql = changes_sql(self.run_rows, self._pins(node_id), self._registry().get, request)
        except SourceIsView:
            if options.get("empty"):
                return f"({empty_view_changes_sql(self.run_rows, request)})"
            pins, find = self._pins(node_id), self._registry().get
            sql = view_changes_sql(self.run_rows, pins, find, request)
        pinned = request.end is None or "stream" in (request.at or {})
        return f"({PINNED_CHANGES_MARKER if pinned else ''} {sql})"

    @available
    def system_time_sql(self, node_id: str, source: BaseRelation, options: dict[str, Any]) -> str:
        """The SQL of one `for_system_time()` call (streams/travel/for_system_time.py)."""
        request = SystemTimeRequest.from_options(
            str(source.schema), str(source.identifier), options
        )
        sql = system_time_sql(self.run_rows, self._pins(node_id), self._now(node_id), request)
        empty = " where false" if options.get("empty") else ""
        return f"({SYSTEM_TIME_MARKER} select * from ({sql}){empty})"

    @available
    def current_valid_time_sql(
        self,
        relation: BaseRelation,
        valid_from: str,
        valid_to: str,
        at: str,
        started: datetime,
    ) -> str:
        """The SQL of one `current_valid_time()` call (streams/travel/current_valid_time.py)."""
        columns = [column.name for column in self.get_columns_in_relation(relation)]  # type: ignore[attr-defined]
        return current_valid_time_sql(str(relation), columns, (valid_from, valid_to), at, started)

    @available
    def retention_start(self, node_id: str, source: BaseRelation) -> str:
        """The earliest time for_system_time() can be asked about, as text."""
        _, _, readable = readable_history(
            self.run_rows,
            self._pins(node_id),
            self._now(node_id),
            str(source.schema),
            str(source.identifier),
            f"retention_start({source.schema}.{source.identifier})",
        )
        return readable.start.strftime(TIME_FORMAT)

    @available
    def refuse_stream_in_view(self, model_name: str, sql: str) -> None:
        """A view cannot hold a stream's position: its SQL would read the versions pinned when
        it was created, forever. The marker finds a stream() call however it reached the view
        (directly or through an ephemeral model)."""
        if STREAM_MARKER in sql:
            raise StreamError(
                f"Model {model_name}: stream() cannot be used in a view. A view cannot hold a "
                "stream's position: it would show the changes pending when it was created, "
                "forever. Read the stream in a stream_incremental model (it consumes the "
                "changes) or peek at it from a table, test, analysis or `dbt show`."
            )
        if SYSTEM_TIME_MARKER in sql:
            raise StreamError(
                f"Model {model_name}: for_system_time() cannot be used in a view: the view "
                "would keep the table version pinned when it was created, and never see a row "
                "version end after it. Materialize the model as a table."
            )
        if PINNED_CHANGES_MARKER in sql:
            raise StreamError(
                f"Model {model_name}: changes() without end= (or with at={{'stream': ...}}) "
                "cannot be used in a view: the view would keep the versions pinned when it was "
                "created, forever. Give end= and a version or timestamp start, or materialize "
                "the model as a table."
            )

    @available
    def stream_consumer(self, model_name: str, config: ModelConfig) -> ConsumerConfig:
        """A stream_incremental model's checked config, for a strategy macro that needs more
        of it than the unique_key (the history strategy's period columns)."""
        return ConsumerConfig.from_model_config(model_name, config)

    @available
    def stream_build_plan(
        self,
        node_id: str,
        model_name: str,
        config: ModelConfig,
        existing: BaseRelation | None,
        full_refresh: bool,
    ) -> BuildPlan:
        """The materialization's one decision (streams/builds/build.py): the checked config, and
        whether to rebuild the target, write its changes or write nothing. When no source
        committed since its streams' offsets there is nothing to consume and no offset to
        move, so the write (and its commit) is skipped altogether."""
        build = self._builds().get((get_invocation_id(), node_id))
        parsed = build.config if build is not None else None
        consumer = parsed or ConsumerConfig.from_model_config(model_name, config)
        existing_is_delta = None if existing is None else bool(existing.is_delta)  # type: ignore[attr-defined]
        return plan(consumer, build, existing_is_delta, full_refresh)

    @available
    def stream_key_ranges(
        self,
        changes: BaseRelation,
        target: BaseRelation,
        unique_key: list[str],
        setting: bool | None,
    ) -> str:
        """` and (t.key between low and high or ...)` naming the change set's key ranges, so
        the write's MERGE skips the target files outside them (streams/builds/key_ranges.py); ''
        when the model's key_ranges says no or its first key column is not an integer."""
        target_bytes = self._size_in_bytes(target) if setting is None and unique_key else None
        if not unique_key or not wants_ranges(setting, target_bytes):
            return ""
        key = unique_key[0]
        columns = self.get_columns_in_relation(changes)
        if not can_range(next((c.dtype for c in columns if c.name.lower() == key.lower()), None)):
            return ""
        rows = self.run_rows(key_ranges_sql(str(changes), quote(key), MOST_RANGES))
        predicate = target_predicate(f"t.{quote(key)}", rows)
        return f" and {predicate}" if predicate else ""

    def _size_in_bytes(self, table: BaseRelation) -> int | None:
        """The bytes of a Delta table's current files, from its snapshot (no data read)."""
        [detail] = self.run_rows(f"describe detail {table}")
        return detail.get("sizeInBytes")

    @available
    def commit_stream_build(
        self, node_id: str, statement: str | None, file_rows: int = 0
    ) -> AdapterResponse:
        """Run the build's one write with the streams' new offsets in the same Delta commit
        (streams/builds/build.py). `file_rows` caps the rows per file the write produces (0: no
        cap); see `write_confs`."""
        build = self._builds().pop((get_invocation_id(), node_id), None)
        self._node_pins.pop((get_invocation_id(), node_id), None)
        registry, with_confs = self._registry(), self._run_with_confs()
        env = BuildEnv(self.run_rows, registry, self._write_source, at_step, with_confs)
        outcome = finish(env, node_id, build, statement, write_confs(file_rows))
        return StreamBuildResponse.of(outcome)

    def _run_with_confs(self) -> RunWithConfs:
        """The thread's session's conf API where the connection has its own session
        (session/statement_confs.py); SQL SET / RESET on dbt-spark's other connections."""
        wrapper = self.connections.get_thread_connection().handle
        bound = getattr(wrapper, "handle", None)
        if isinstance(bound, BoundConnection):
            return session_confs(bound.session, self.run_rows)
        return sql_confs(self.run_rows)

    def _write_source(self, statement: str, message: str) -> None:
        """A source write a build planned (Change Data Feed on, retention extended).

        Builds of other models on the same source may plan the same ALTER: threads take turns,
        and a write that lost to another process's metadata change is tried again (the same
        properties set twice change nothing).
        """
        with self._source_write_lock:
            retry_on_conflict(partial(self.run_rows, statement))
        logger.info(message)

    def cleanup_connections(self) -> None:
        """dbt closes its connections at the end of every invocation: the registry is
        written then, once for all the invocation's builds."""
        try:
            self.flush_stream_registry()
        finally:
            super().cleanup_connections()  # type: ignore[misc]

    def flush_stream_registry(self) -> None:
        """Append the offsets this invocation's builds committed to the registry, in one
        commit. A failure is a warning: the offsets are committed with the targets, and each
        model's next build rolls the registry forward from there."""
        registry = self._stream_registry
        if registry is None or not registry.has_queued():
            return
        for attempt in range(1, REGISTRY_RETRIES + 1):
            try:
                with self.connection_named("stream_registry"):
                    recorded, rolled_forward = registry.flush()
                break
            except Exception as exc:
                if attempt == REGISTRY_RETRIES:
                    logger.warning(
                        f"Stream offsets are committed with their targets, but the registry "
                        f"update failed ({exc}); each model's next build rolls it forward."
                    )
                    return
                time.sleep(attempt)
        logger.debug(f"Stream registry: recorded {_names(recorded)}")
        if rolled_forward:
            logger.info(
                f"Streams {_names(rolled_forward)}: registry rolled forward to the offsets "
                "committed with their consumers' targets"
            )

    @available
    def stream_records(self, project_consumers: list[str] | None = None) -> list[dict[str, Any]]:
        """Every registered stream with its staleness now, for show_streams and describe_stream;
        `owner_gone` when its consumer is not among the project's stream_incremental models."""
        consumers = set(project_consumers or ())
        records = self._registry().all()
        sets = FileSets.of(self._registry()) if _has_files(records) else None
        return [
            {**stream_status(self.run_rows, r, sets), "owner_gone": r.consumer not in consumers}
            for r in records
        ]

    @available
    def stream_freshness(
        self,
        relation: BaseRelation,
        warn_after_hours: float | None = None,
        error_after_hours: float | None = None,
    ) -> list[dict[str, str]]:
        """The stream_fresh test's failing rows for the model `relation` (freshness.py)."""
        target = f"{relation.schema}.{relation.identifier}"
        now = datetime.now()
        return freshness_failures(
            self.stream_records(), target, warn_after_hours, error_after_hours, now
        )

    @available
    def format_streams(self, streams: list[dict[str, Any]], output_format: str) -> str:
        """show_streams' output: an aligned table, or JSON lines (streams/status/listing.py)."""
        return format_streams(streams, output_format)

    @available
    def drop_stream(self, name: str, project_consumers: list[str]) -> dict[str, Any]:
        """Remove a stream whose consumer has left the project from the registry; the source
        is untouched. A live consumer keeps its stream: its target's commits carry the offset,
        so a registry entry dropped under it would come back on its next build."""
        record = self._registry().get(name)
        if record is None:
            raise StreamError(
                f"No stream named '{name}'. Run `dbt run-operation show_streams` to list the "
                "streams."
            )
        if record.consumer in project_consumers:
            raise StreamError(
                f"Stream {name} is consumed by {record.consumer}, which is still in the project, "
                "so it is not dropped. Remove or rename that model first, or rebuild it with "
                "--full-refresh to start its stream over."
            )
        self._registry().drop(name)
        if _has_files([record]):
            sets = FileSets.of(self._registry())
            self.run_rows(sets.drop_sql(name))
        return dict(vars(record))


def _resolve_any(
    run: RunSql, registry: Registry, build: StreamBuild, request: StreamRequest
) -> str:
    """A stream on a Delta table, a view (tried when the source is one) or, in mode
    insert_only, a file-based table."""
    if request.mode == "insert_only":
        return resolve_file_stream(run, registry, build, request)
    try:
        return resolve_stream(run, registry, build, request)
    except SourceIsView:
        return resolve_view_stream(run, registry, build, request)


def write_confs(file_rows: int) -> dict[str, str]:
    """Session confs for a target's write. A cap on rows per file keeps a stream target in
    many small files; a later MERGE then rewrites (and re-reads) only the files its keys
    touch instead of files as large as the table."""
    return {MAX_RECORDS_PER_FILE: str(file_rows)} if file_rows > 0 else {}


def _has_files(records: list[StreamRecord]) -> bool:
    """Whether any of the streams is an insert-only stream, whose offsets are file sets."""
    return any(record.source_type == FILES_SOURCE_TYPE for record in records)


def _log_warnings(build: StreamBuild) -> None:
    """Warn about what the stream reads found, once each."""
    for warning in build.warnings:
        logger.warning(warning)
    build.warnings.clear()


def _names(records: list[StreamRecord]) -> str:
    return ", ".join(sorted(record.name for record in records)) or "no stream"


def _start_point(name: str, options: dict[str, Any]) -> dict | None:
    """The `at` or `before` mapping; giving both is ambiguous."""
    at, before = options.get("at"), options.get("before")
    if at is not None and before is not None:
        raise StreamError(
            f"Stream {name}: give at= or before=, not both (at names the table's "
            "state including a point's commit, before the state just ahead of it)."
        )
    point = at if at is not None else before
    if point is not None and not isinstance(point, dict):
        raise StreamError(
            f"Stream {name}: at/before must be a mapping like {{'version': 3}} or "
            f"{{'timestamp': '2024-01-01 00:00:00'}}, not {point!r}."
        )
    return point


def _other_consumers(node_id: str, options: dict[str, Any]) -> tuple[str, ...]:
    """The project's other stream_incremental models that name this stream explicitly."""
    name = options.get("name")
    if not name:
        return ()
    declared = options.get("stream_consumers") or {}
    return tuple(node for node, names in declared.items() if node != node_id and name in names)


def _stream_key(options: dict[str, Any], consumer: ConsumerConfig | None) -> tuple[str, ...]:
    """stream()'s unique_key; in a consumer without one, the model's unique_key."""
    return as_key(options.get("unique_key")) or (consumer.unique_key if consumer else ())
