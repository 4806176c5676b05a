"""One `stream()` call as every kind reads it, and the record a build moves its stream to."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.records.netting import VERSIONS
from dbt.adapters.spark_streams.streams.sql.catalog import as_key


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

    @classmethod
    def from_options(
        cls,
        node_id: str,
        model_name: str,
        source: tuple[str, str],
        options: dict[str, Any],
        consumer: ConsumerConfig | None,
    ) -> "StreamRequest":
        """The request of the stream() macro's arguments (`options`) in the model `node_id`
        on the source (schema, identifier); `consumer` is the model's checked config when it
        consumes its streams."""
        name = str(options.get("name") or f"{model_name}__{options['relation_label']}")
        schema, identifier = source
        return cls(
            name=name,
            schema=schema,
            identifier=identifier,
            mode=str(options.get("mode") or "standard"),
            # an apply_cdc model's key is its events' (each event a row), not the stream's
            unique_key=as_key(options.get("unique_key"))
            or (consumer.unique_key if consumer and consumer.cdc is None else ()),
            show_initial_rows=bool(options.get("show_initial_rows", True)),
            start=_start_point(name, options),
            start_at=options.get("at") is not None,
            other_consumers=_other_consumers(node_id, options),
            every_version=consumer is not None and consumer.keeps_history,
        )

    @property
    def rows_mode(self) -> str:
        """The mode its rows are read in: a standard stream of a history consumer reads every
        version."""
        return VERSIONS if self.every_version and self.mode == "standard" else self.mode


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
