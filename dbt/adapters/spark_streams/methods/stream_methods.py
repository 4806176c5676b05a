"""The adapter surface macros call for streams: Python decides, Jinja emits the SQL.

Each method translates dbt's arguments (relations, the model's config, the macro's options)
into one engine call. What a model's calls must share (its pins, its build, its `now`) lives in
one NodeState per model and invocation (streams/builds/nodes.py), dropped when dbt closes its
connections at the end of the invocation.
"""

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any, cast

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.invocation import get_invocation_id

from dbt.adapters.spark_streams.methods.build_response import StreamBuildResponse
from dbt.adapters.spark_streams.session.cursor import BoundConnection
from dbt.adapters.spark_streams.session.servers.lost_servers import thrift_error
from dbt.adapters.spark_streams.session.statement_confs import session_confs
from dbt.adapters.spark_streams.session.stores import lease
from dbt.adapters.spark_streams.streams.builds.build import (
    BuildEnv,
    BuildPlan,
    StreamBuild,
    begin,
    finish,
    plan,
    write_confs,
)
from dbt.adapters.spark_streams.streams.builds.change_reads import read_changes
from dbt.adapters.spark_streams.streams.builds.config import (
    ConsumerConfig,
    ModelConfig,
    StreamSettings,
    consumer_config,
)
from dbt.adapters.spark_streams.streams.builds.faults import at_step
from dbt.adapters.spark_streams.streams.builds.nodes import NodeState, NodeStates
from dbt.adapters.spark_streams.streams.delta.history_rows import with_mappings
from dbt.adapters.spark_streams.streams.errors import SparkUnreachable, StreamError
from dbt.adapters.spark_streams.streams.kinds import choose
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.offsets.commit import retry_on_conflict, sql_confs
from dbt.adapters.spark_streams.streams.offsets.registry import Registry
from dbt.adapters.spark_streams.streams.records.key_ranges import (
    MOST_RANGES,
    can_range,
    key_ranges_sql,
    target_predicate,
    wants_ranges,
)
from dbt.adapters.spark_streams.streams.sql.catalog import table_bytes
from dbt.adapters.spark_streams.streams.sql.quoting import quote, quote_path, string_literal
from dbt.adapters.spark_streams.streams.sql.run import Row, RunWithConfs
from dbt.adapters.spark_streams.streams.travel import current_valid_time, for_system_time
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest
from dbt.adapters.spark_streams.streams.travel.for_system_time import (
    TIME_FORMAT,
    SystemTimeRequest,
    readable_history,
)

logger = AdapterLogger("SparkStreams")
# Marks the SQL of every stream() call, so a view built on one is recognised.
STREAM_MARKER = "/* dbt_spark_streams:stream */"
# Marks the SQL of a changes() call whose interval ends at (or starts from) the build's state.
PINNED_CHANGES_MARKER = "/* dbt_spark_streams:changes_until_build */"
SYSTEM_TIME_MARKER = "/* dbt_spark_streams:system_time */"


def dry_run_flag(options: dict[str, Any]) -> str:
    """The dbt flag that makes a stream build a dry run: `--empty` (every input with `limit
    0`), or `--sample` on a stream whose source has an `event_time` (the sample's window
    would consume part of the pending changes and skip the rest for good)."""
    if options.get("empty"):
        return "--empty"
    return "--sample" if options.get("sample") else ""


class StreamMethods(metaclass=AdapterMeta):
    """Mixed into the adapter (AdapterMeta collects its @available methods)."""

    connections: Any
    config: Any
    get_columns_in_relation: Callable[..., Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The stream state every dbt thread shares, made before any thread starts."""
        super().__init__(*args, **kwargs)
        self._stream_registry: Registry | None = None
        self._nodes = NodeStates()
        self._registry_lock = threading.Lock()
        self._source_write_lock = threading.Lock()

    def run_rows(self, sql: str) -> list[Row]:
        """Run one statement and return its rows as dicts (column name to value), a history's
        map columns as dicts whichever method brought them (streams/delta/history_rows.py)."""
        try:
            _, cursor = self.connections.add_query(sql, auto_begin=False)
            rows = cursor.fetchall() or []
            names = [column[0] for column in cursor.description or []]
        except SparkUnreachable:
            raise
        except Exception as exc:  # a HiveServer2 fetch's errors are not wrapped by dbt
            said = thrift_error(self.config.credentials, exc)
            if said is None:
                raise
            raise said from None
        return [with_mappings(dict(zip(names, row, strict=True))) for row in rows]

    def _registry(self) -> Registry:
        """One Registry per adapter, so its table is created-if-missing once, not per read."""
        with self._registry_lock:
            if self._stream_registry is None:
                self._stream_registry = Registry(self.run_rows, self.config.credentials.schema)
            return self._stream_registry

    def _node(self, node_id: str) -> NodeState:
        """The model's state in this invocation."""
        return self._nodes.of((get_invocation_id(), node_id))

    @available
    def declare_stream(self, node_id: str, name: str) -> list[str]:
        """At parse time: the stream names `node_id` has named so far, for its meta.

        dbt clobbers a custom config key on each config() call, so every call carries the
        whole list of the model's names.
        """
        names = self._node(node_id).declared_streams
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
        node = self._node(node_id)
        first_call = node.build is None
        if node.build is None:
            consumer = None  # a materialized view's plan parsed it already (what it reads)
            if consuming:
                consumer = node.consumer or consumer_config(model_name, config)
            settings = consumer.streams if consumer else StreamSettings.from_model_config(
                model_name, config
            )  # fmt: skip
            build = StreamBuild(
                consumer=node_id if consuming else None,
                config=consumer,
                schema=str(target.schema),
                target=quote_path(str(target.schema), str(target.identifier)),
                target_exists=target_exists,
                full_refresh=full_refresh,
                auto_enable_change_tracking=settings.auto_enable_change_tracking,
                max_data_extension_days=settings.max_data_extension_days,
                dry_run=dry_run_flag(options),
                project_consumers=frozenset(options.get("stream_consumers") or ()),
                pins=node.pins,
            )
            if consuming:
                node.lease = lease.take(build.target, model_name)
            node.build = begin(self.run_rows, build)
        build = node.build
        place = (str(source.schema), str(source.identifier))
        request = StreamRequest.from_options(node_id, model_name, place, options, build.config)
        sql = choose.stream_sql(self.run_rows, self._registry(), build, request)
        for warning in build.warnings:
            logger.warning(warning)
        build.warnings.clear()
        if consuming and first_call:  # the crash tests' step, once per build
            at_step("after_pin")
        return f"({STREAM_MARKER} {sql})"

    @available
    def changes_sql(self, node_id: str, source: BaseRelation, options: dict[str, Any]) -> str:
        """The SQL of one `changes()` call (streams/travel/changes.py): read-only, so it needs
        no build, only the node's pins. Its default end is the build's pin, which a view would
        keep forever: such SQL carries a marker the view materialization refuses."""
        request = ChangesRequest.from_options(str(source.schema), str(source.identifier), options)
        node, find = self._node(node_id), self._registry().get
        sql = choose.changes_sql(self.run_rows, node.pins, find, request)
        if request.empty:
            return f"({sql})"
        return f"({PINNED_CHANGES_MARKER if request.ends_at_build else ''} {sql})"

    @available
    def system_time_sql(self, node_id: str, source: BaseRelation, options: dict[str, Any]) -> str:
        """The SQL of one `for_system_time()` call (streams/travel/for_system_time.py)."""
        request = SystemTimeRequest.from_options(
            str(source.schema), str(source.identifier), options
        )
        node = self._node(node_id)
        sql = for_system_time.system_time_sql(self.run_rows, node.pins, node.now, request)
        empty = " where false" if options.get("empty") else ""
        return f"({SYSTEM_TIME_MARKER} select * from ({sql}){empty})"

    @available
    def current_valid_time_sql(
        self, relation: BaseRelation, valid_from: str, valid_to: str, at: str, started: datetime
    ) -> str:
        """The SQL of one `current_valid_time()` call (streams/travel/current_valid_time.py).
        A CTE (a unit test's fixture, an ephemeral model) has no catalog entry to list; the
        columns of a relation dbt reads with `limit 0` or a time window are its table's."""
        bare = replace(relation, limit=None, event_time_filter=None)  # of --empty, --sample
        columns = None if relation.is_cte else [c.name for c in self.get_columns_in_relation(bare)]
        period = (valid_from, valid_to)
        return current_valid_time.current_valid_time_sql(
            str(relation), columns, period, at, started
        )

    @available
    def retention_start(self, node_id: str, source: BaseRelation) -> str:
        """The earliest time for_system_time() can be asked about, as text."""
        node = self._node(node_id)
        label = f"retention_start({source.schema}.{source.identifier})"
        place = (str(source.schema), str(source.identifier))
        _, _, readable = readable_history(self.run_rows, node.pins, node.now, *place, label)
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
    def stream_build_plan(
        self,
        node_id: str,
        model_name: str,
        config: ModelConfig,
        existing: BaseRelation | None,
        full_refresh: bool,
        sql: str = "",
    ) -> BuildPlan:
        """The materialization's one decision (streams/builds/build.py): the checked config,
        and whether to rebuild the target, write its changes or write nothing. When no source
        committed since its streams' offsets there is nothing to consume and no offset to
        move, so the write (and its commit) is skipped altogether. `sql` is the model's, in
        which a view stream's rebuild puts the view's rows."""
        node = self._node(node_id)
        consumer = self.stream_consumer(node_id, model_name, config)
        existing_is_delta = None if existing is None else bool(existing.is_delta)  # type: ignore[attr-defined]
        return plan(consumer, node.build, existing_is_delta, full_refresh, sql)

    @available
    def stream_consumer(
        self, node_id: str, model_name: str, config: ModelConfig
    ) -> ConsumerConfig:
        """The model's checked stream_incremental config, parsed once per build: by its first
        stream() call, else here (the plan and the strategy macros ask for it too)."""
        node = self._node(node_id)
        if node.consumer is None:
            parsed = node.build.config if node.build is not None else None
            node.consumer = parsed or consumer_config(model_name, config)
        return node.consumer

    @available
    def stream_key_ranges(
        self,
        changes: BaseRelation,
        target: BaseRelation,
        unique_key: list[str],
        consumer: ConsumerConfig,
        node_id: str = "",
    ) -> str:
        """` and (t.key between low and high or ...)` naming the change set's key ranges, so
        the write's MERGE skips the target files outside them (streams/records/key_ranges.py);
        for a mirror clustered by another column, that column's ranges instead (config.py,
        ranges_cluster_column), taken from the view stream's tables' change sets when the
        build knows them (views/lineage.py) instead of read from the change set. '' when the
        model's key_ranges says no or the column is not an integer."""
        setting = consumer.key_ranges
        target_bytes = (
            table_bytes(self.run_rows, str(target)) if setting is None and unique_key else None
        )
        if not unique_key or not wants_ranges(setting, target_bytes):
            return ""
        column = consumer.ranges_cluster_column or unique_key[0]
        build = self._node(node_id).build if node_id else None
        known = build.target_ranges if build is not None else None
        if known is not None and known.column.lower() == column.lower():
            predicate = target_predicate(f"t.{quote(column)}", known.rows)
            return f" and {predicate}" if predicate else ""
        types = {c.name.lower(): c.dtype for c in self.get_columns_in_relation(changes)}
        if not can_range(types.get(column.lower())):
            return ""
        ranges = key_ranges_sql(str(changes), quote(column), MOST_RANGES)
        rows = read_changes(self.run_rows, self._run_with_confs(), build, ranges)
        predicate = target_predicate(f"t.{quote(column)}", rows)
        return f" and {predicate}" if predicate else ""

    @available
    def check_stream_target(self, consumer: ConsumerConfig, target: BaseRelation) -> None:
        """Before a write into an existing target: a history target must have the period
        columns the model's config names."""
        columns = [column.name for column in self.get_columns_in_relation(target)]
        consumer.check_target(str(target), columns)

    @available
    def stream_strategy_macro(self, context: dict[str, Any], strategy: str) -> Any:
        """The macro writing a build of `strategy`: `stream_<strategy>_sql`, looked up in the
        model's context as dbt's get_incremental_strategy_macro does, so a project's own macro
        of that name wins."""
        name = f"stream_{strategy}_sql"
        if name not in context:
            raise StreamError(
                f"incremental_strategy '{strategy}' has no macro {name}; define it in the "
                "project's macros (see materializations/stream_incremental/)."
            )
        return context[name]

    @available
    def commit_stream_build(
        self, node_id: str, statement: str | None, file_rows: int = 0
    ) -> AdapterResponse:
        """Run the build's one write with the streams' new offsets in the same Delta commit
        (streams/builds/build.py). `file_rows` caps the rows per file the write produces (0:
        no cap); see `write_confs`."""
        node = self._node(node_id)
        build, node.build = node.build, None
        env = BuildEnv(
            self.run_rows, self._registry(), self._write_source, at_step, self._run_with_confs()
        )
        try:
            outcome = finish(env, node_id, build, statement, write_confs(file_rows))
        finally:
            held, node.lease = node.lease, None
            lease.give_back(cast(lease.Lease | None, held))
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
        properties set twice change nothing). On an object store, processes take turns too
        (lease.shared_writes).
        """
        with self._source_write_lock, lease.shared_writes(message.split(":", 1)[0]):
            retry_on_conflict(partial(self.run_rows, statement))
        logger.info(message)
