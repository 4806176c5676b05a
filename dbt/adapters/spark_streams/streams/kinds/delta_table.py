"""The Delta table, the first kind of stream source: changes come from its Change Data Feed,
its state and identity from its history and table id. Its streams are read by the table-stream
flow (table_stream.py), for which it is the TableSource."""

from dataclasses import replace
from datetime import datetime
from typing import Any

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.delta.identity import same_source, with_table_id
from dbt.adapters.spark_streams.streams.delta.points import state_version
from dbt.adapters.spark_streams.streams.delta.retention import retention_extension
from dbt.adapters.spark_streams.streams.delta.schema_changes import (
    SchemaReads,
    check_schema_changes,
)
from dbt.adapters.spark_streams.streams.delta.source import (
    SourceTable,
    SourceVersion,
    describe_source,
    enable_change_data_feed,
    enable_command,
    inspect_source,
    latest_version,
    source_table_id,
)
from dbt.adapters.spark_streams.streams.delta.staleness import (
    CommitsSinceOffset,
    check_readable,
    commits_since_offset,
    expiry_warning,
    stale_after,
    stale_reason,
)
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.kinds.table_stream import SourceWrite, resolve_stream
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.records.netting import (
    Snapshot,
    changes_between,
    empty_sql,
    initial_rows_sql,
)
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.travel.changes import (
    ChangesRequest,
    StreamLookup,
    table_changes_sql,
)


class DeltaTableKind:
    """A Delta table with Change Data Feed (turned on by the first consuming build)."""

    source_type = "delta"
    modes: tuple[str, ...] = ("standard", "append_only")
    label = "Delta tables"

    # The stream kind (kind.py): what stream(), changes() and the status of its streams read.

    def claims(self, source: CatalogEntry, mode: str | None) -> bool:
        """Every source the kinds registered before it leave: its description then names what
        is wrong with a source that is no Delta table."""
        return True

    def stream(
        self,
        run: RunSql,
        registry: Registry,
        build: StreamBuild,
        request: StreamRequest,
        source: CatalogEntry,
    ) -> str:
        return resolve_stream(run, registry, build, request, self, source)

    def changes(
        self,
        run: RunSql,
        pins: dict[str, SourceVersion],
        find_stream: StreamLookup,
        request: ChangesRequest,
        source: CatalogEntry,
    ) -> str:
        return table_changes_sql(run, pins, find_stream, request, source)

    def status(self, run: RunSql, registry: Registry, record: StreamRecord) -> dict[str, Any]:
        """Stale when the source is gone or no Delta table, was recreated or replaced, or
        Delta can no longer read the changes since the offset."""
        try:
            source = inspect_source(run, record.source_table, record.name)
        except StreamError as exc:
            return _stale(exc.msg)
        if source is None:
            return _stale(f"source {record.source_table} is no longer a Delta table")
        pending = commits_since_offset(
            run, source.name, record.offset_version, record.offset_timestamp
        )
        if with_table_id(run, record, source, pending).table_id != record.source_id:
            return _stale(f"source {record.source_table} was dropped and recreated or replaced")
        reason = stale_reason(pending, source.retention, source.change_data_feed)
        deadline: datetime | None = stale_after(pending, source.retention)
        return {
            "stale": reason is not None,
            "stale_after": deadline,
            "stale_reason": reason[0] if reason else "",
        }

    def dropped(self, run: RunSql, registry: Registry, record: StreamRecord) -> None:
        """A Delta table stream keeps nothing besides its registry rows."""

    # The table source (table_stream.py): what the flow asks of a versioned table.

    def describe(self, run: RunSql, entry: CatalogEntry, stream: str) -> SourceTable:
        return describe_source(run, entry, stream)

    def identify(self, run: RunSql, source: SourceTable) -> SourceTable:
        return source_table_id(run, source)

    def latest(self, run: RunSql, source: SourceTable) -> SourceVersion:
        return latest_version(run, source.name)

    def history(
        self, run: RunSql, source: SourceTable, offset: StreamRecord, pin: SourceVersion | None
    ) -> CommitsSinceOffset:
        return commits_since_offset(
            run,
            source.name,
            offset.offset_version,
            offset.offset_timestamp,
            pin=pin.version if pin else None,
        )

    def check_same(
        self,
        run: RunSql,
        stream: str,
        offset: StreamRecord,
        source: SourceTable,
        history: CommitsSinceOffset,
    ) -> SourceTable:
        return same_source(run, stream, offset, source, history)

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
        """Fail a stale stream or a schema change the read cannot cross; warn when the
        pending changes are about to leave retention."""
        check_readable(stream, history, source.retention, source.change_data_feed)
        warning = expiry_warning(stream, history, source.retention)
        check_schema_changes(run, reads, stream, history, offset.consumer, consuming)
        return [warning] if warning else []

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
        """A new stream from a point: its first read is checked for schema changes as an
        existing stream's pending changes are, from the history of the versions it reads."""
        first, pin = versions
        history = commits_since_offset(run, source.name, first - 1, pin=pin)
        check_schema_changes(run, reads, stream, history, consumer, consuming, started=True)

    def prepare(
        self,
        stream: str,
        source: SourceTable,
        creating: bool,
        consuming: bool,
        auto_enable: bool,
        extension_days: int,
    ) -> tuple[SourceTable, list[SourceWrite]]:
        """Change Data Feed on (only a consumer's first build may turn it on), retention
        extended to `extension_days` for a consumer."""
        writes: list[SourceWrite] = []
        if not source.change_data_feed:
            if not (creating and consuming and auto_enable):
                raise StreamError(
                    f"Stream {stream}: source {source.name} does not have Change Data Feed on, "
                    "and streams read changes from it. Run:\n  "
                    f"{enable_command(source.name)}\nor let a consuming build do it "
                    "(config auto_enable_change_tracking: true, the default). Changes made "
                    "before it is on are never available."
                )
            writes.append(
                (
                    enable_change_data_feed(source.name),
                    f"{source.name}: Change Data Feed turned on",
                )
            )
            source = replace(source, change_data_feed=True)
        if consuming and extension_days:
            statement, changes = retention_extension(source.name, source.retention, extension_days)
            if statement:
                writes.append((statement, "; ".join(changes)))
        return source, writes

    def first_version(self, run: RunSql, source: SourceTable, point: dict, at: bool) -> int:
        """The first version a new stream reads from a point, which names a table state as
        Snowflake's AT | BEFORE do: `at` the state that includes the point's commit, `before`
        the state just ahead of it. The stream's offset is that state's version."""
        try:
            return state_version(run, source.name, point, at) + 1
        except ValueError as exc:
            raise StreamError(
                f"Stream start {point!r} on {source.name}: {exc}. Give {{'version': n}} or "
                "{'timestamp': 'YYYY-MM-DD HH:MM:SS'}."
            ) from exc

    def changes_sql(self, mode: str, snapshot: Snapshot, first: int) -> str:
        return changes_between(mode, snapshot, first)

    def initial_rows_sql(self, snapshot: Snapshot) -> str:
        return initial_rows_sql(snapshot)

    def empty_sql(self, snapshot: Snapshot) -> str:
        return empty_sql(snapshot)


def _stale(reason: str) -> dict[str, Any]:
    return {"stale": True, "stale_after": None, "stale_reason": reason}


DELTA_TABLE = DeltaTableKind()
