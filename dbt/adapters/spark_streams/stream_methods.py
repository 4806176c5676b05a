"""The adapter surface macros call for streams: Python decides, Jinja emits the SQL.

Each model build gets a StreamBuild (keyed by invocation and model), so pins and offsets live
exactly as long as the build that took them.
"""

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.invocation import get_invocation_id

from dbt.adapters.spark_streams.streams.commit import (
    BuildCommit,
    latest_commit_for,
    marker_confs,
    retry_on_conflict,
    run_with_commit,
    run_with_confs,
    verify_landed,
)
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.faults import crash_during, crash_point
from dbt.adapters.spark_streams.streams.reader import StreamBuild, StreamRequest, read_stream
from dbt.adapters.spark_streams.streams.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.retention import extension_days
from dbt.adapters.spark_streams.streams.runner import Row
from dbt.adapters.spark_streams.streams.sql import quote_path
from dbt.adapters.spark_streams.streams.status import stream_status

logger = AdapterLogger("SparkStreams")
REGISTRY_RETRIES = 3
MAX_RECORDS_PER_FILE = "spark.sql.files.maxRecordsPerFile"
DEFAULT_EXTENSION_DAYS = 14


class StreamMethods(metaclass=AdapterMeta):
    """Mixed into the adapter (AdapterMeta collects its @available methods)."""

    connections: Any
    config: Any
    connection_named: Callable[..., Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The stream state every dbt thread shares, made before any thread starts."""
        super().__init__(*args, **kwargs)
        self._stream_registry: Registry | None = None
        self._stream_builds: dict[tuple[str, str], StreamBuild] = {}
        self._declared_streams: dict[tuple[str, str], list[str]] = {}
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
    def stream_sql(
        self,
        node_id: str,
        consuming: bool,
        target: BaseRelation,
        target_exists: bool,
        full_refresh: bool,
        source: BaseRelation,
        options: dict[str, Any],
    ) -> str:
        """The change-set SQL of one `stream()` call in the model `node_id`."""
        target_name = quote_path(str(target.schema), str(target.identifier))

        def new_build() -> StreamBuild:
            build = StreamBuild(
                consumer=node_id if consuming else None,
                schema=str(target.schema),
                target=target_name,
                target_exists=target_exists,
                full_refresh=full_refresh,
                auto_enable_change_tracking=bool(options.get("auto_enable_change_tracking")),
                max_data_extension_days=extension_days(
                    options.get("max_data_extension_time", DEFAULT_EXTENSION_DAYS), node_id
                ),
                dry_run=bool(options.get("empty")),
                project_consumers=frozenset(options.get("project_consumers") or ()),
            )
            if consuming and target_exists:
                self._reconcile(build)
            return build

        build = self._build(node_id, new_build)
        request = StreamRequest(
            name=str(options["name"]),
            schema=str(source.schema),
            identifier=str(source.identifier),
            mode=str(options.get("mode") or "standard"),
            unique_key=_as_key(options.get("unique_key")),
            show_initial_rows=bool(options.get("show_initial_rows", True)),
            start=_start_point(options),
            start_inclusive=options.get("at") is not None,
            other_consumers=tuple(options.get("other_consumers") or ()),
        )
        sql = read_stream(self.run_rows, self._registry(), build, request)
        _log_warnings(build)
        if consuming:
            crash_point("after_pin")
        return sql

    def _reconcile(self, build: StreamBuild) -> None:
        """Take the streams' offsets from the target's last stream commit, where they count.

        The registry is not read: a build that writes appends its streams' new offsets anyway,
        and a build without a write rolls the registry forward in `_roll_forward`.
        """
        assert build.consumer is not None
        commit = latest_commit_for(self.run_rows, build.target, build.consumer)
        if commit is None:
            return
        build.last_txn_version = commit.txn_version
        if commit.fresh_target:
            # A dry run (--empty) created the target empty: its streams start over.
            build.target_exists = False
            return
        build.committed = commit.records
        for record in commit.records:
            build.registered[record.name] = record

    @available
    def stream_changes_pending(self, node_id: str) -> bool:
        """Whether the model's build has anything to write. When no source committed since
        its stream's offset there is nothing to consume and no offset to move, so the
        materialization skips the write (and its commit) altogether."""
        build = self._builds().get((get_invocation_id(), node_id))
        return build is None or build.pending

    @available
    def commit_stream_build(
        self, node_id: str, statement: str | None, file_rows: int = 0
    ) -> AdapterResponse:
        """Run the build's one write with the streams' new offsets in the same Delta commit.

        With no statement (nothing pending) the build ends without a write. `file_rows` caps
        the rows per file the write produces (0: no cap); see `write_confs`.
        """
        confs = write_confs(file_rows)
        build = self._builds().pop((get_invocation_id(), node_id), None)
        if build is not None and build.dry_run:
            return self._dry_run_write(build, node_id, statement, confs)
        if statement is None:
            if build is not None:
                self._registry().queue_if_behind(build.committed)
            return AdapterResponse(_message="OK, no pending changes")
        if build is None or not build.reads:
            run_with_confs(self.run_rows, statement, confs)
            return AdapterResponse(_message="OK")
        self._write_sources(build)
        records = [record for record, _ in build.reads.values()]
        txn_version = max([build.last_txn_version, *(r.txn_version for r in records)]) + 1
        stamped = tuple(_with_txn(record, txn_version) for record in records)
        commit = BuildCommit(node_id, uuid.uuid4().hex, txn_version, stamped)
        crash_during("during_write")
        # The write runs the change read: a read across a source's schema change may need
        # Delta's schema check off, for this statement only (streams/schema_changes.py).
        confs = {**confs, **build.schema_reads.confs}
        reported = run_with_commit(self.run_rows, statement, commit, confs)
        if not reported:
            # A MERGE that commits reports its metrics row, and one Delta skipped as already
            # applied reports nothing; other writes report nothing either way, so the
            # target's history decides.
            verify_landed(self.run_rows, build.target, commit)
        crash_point("after_commit")
        self._registry().queue(stamped)
        self._registry().queue_if_behind(build.committed)
        names = ", ".join(record.name for record in stamped)
        return AdapterResponse(_message=f"OK, consumed {names}")

    def _dry_run_write(
        self, build: StreamBuild, node_id: str, statement: str | None, confs: dict[str, str]
    ) -> AdapterResponse:
        """dbt's --empty: the target is created empty where it is missing, and no offset
        moves. The created target is marked so that its next real build starts its streams
        over instead of resuming a registered offset into an empty table."""
        if statement is None:
            return AdapterResponse(_message="OK, --empty: nothing consumed")
        commit = BuildCommit(node_id, uuid.uuid4().hex, build.last_txn_version, (), True)
        run_with_confs(self.run_rows, statement, {**confs, **marker_confs(commit)})
        return AdapterResponse(_message="OK, --empty: target created empty, nothing consumed")

    def _write_sources(self, build: StreamBuild) -> None:
        """The source writes the build planned (Change Data Feed on, retention extended).

        Builds of other models on the same source may plan the same ALTER: threads take turns,
        and a write that lost to another process's metadata change is tried again (the same
        properties set twice change nothing).
        """
        for statement, message in build.source_writes:
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
        return [
            {**stream_status(self.run_rows, r), "owner_gone": r.consumer not in consumers}
            for r in self._registry().all()
        ]

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
        return dict(vars(record))


def write_confs(file_rows: int) -> dict[str, str]:
    """Session confs for a target's write. A cap on rows per file keeps a stream target in
    many small files; a later MERGE then rewrites (and re-reads) only the files its keys
    touch instead of files as large as the table."""
    return {MAX_RECORDS_PER_FILE: str(file_rows)} if file_rows > 0 else {}


def _log_warnings(build: StreamBuild) -> None:
    """Warn about what the stream reads found, once each."""
    for warning in build.warnings:
        logger.warning(warning)
    build.warnings.clear()


def _names(records: list[StreamRecord]) -> str:
    return ", ".join(sorted(record.name for record in records)) or "no stream"


def _start_point(options: dict[str, Any]) -> dict | None:
    """The `at` or `before` mapping; giving both is ambiguous."""
    at, before = options.get("at"), options.get("before")
    if at is not None and before is not None:
        raise StreamError(
            f"Stream {options['name']}: give at= or before=, not both (at is inclusive, before "
            "exclusive)."
        )
    point = at if at is not None else before
    if point is not None and not isinstance(point, dict):
        raise StreamError(
            f"Stream {options['name']}: at/before must be a mapping like {{'version': 3}} or "
            f"{{'timestamp': '2024-01-01 00:00:00'}}, not {point!r}."
        )
    return point


def _as_key(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(item) for item in value)


def _with_txn(record: StreamRecord, txn_version: int) -> StreamRecord:
    return replace(record, txn_version=txn_version)
