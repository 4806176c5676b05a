"""The adapter surface of the run-operations and tests on streams (show_streams,
describe_stream, explain_stream, drop_stream, stream_fresh) and of the registry's
end-of-invocation write."""

import json
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any, cast

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.spark_streams.session.servers.lost_servers import forget_lost_servers
from dbt.adapters.spark_streams.session.stores import lease
from dbt.adapters.spark_streams.streams.builds.config import (
    check_contract_columns,
    consumer_config,
)
from dbt.adapters.spark_streams.streams.builds.nodes import NodeStates
from dbt.adapters.spark_streams.streams.mv.plan import (
    RECOMPUTE_KEYS,
    RECOMPUTES_INPUT,
    REFRESH_PATH,
)
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.catalog import table_properties
from dbt.adapters.spark_streams.streams.sql.run import Row, RunWithConfs
from dbt.adapters.spark_streams.streams.status.explain import explain_consumer
from dbt.adapters.spark_streams.streams.status.freshness import freshness_failures
from dbt.adapters.spark_streams.streams.status.listing import format_streams
from dbt.adapters.spark_streams.streams.status.streams import (
    described_stream,
    drop_stream,
    stream_statuses,
)

logger = AdapterLogger("SparkStreams")
REGISTRY_RETRIES = 3


class StreamOperations(metaclass=AdapterMeta):
    """Mixed into the adapter beside StreamMethods, whose registry and node states it uses."""

    _stream_registry: Registry | None
    _nodes: NodeStates
    _registry: Callable[[], Registry]
    run_rows: Callable[[str], list[Row]]
    _run_with_confs: Callable[[], RunWithConfs]
    connection_named: Callable[..., Any]

    @available
    def stream_records(self, project_consumers: list[str] | None = None) -> list[dict[str, Any]]:
        """Every registered stream with its staleness now, for show_streams and describe_stream;
        `owner_gone` when its consumer is not among the project's stream_incremental models."""
        return stream_statuses(self.run_rows, self._registry(), project_consumers)

    @available
    def describe_stream(self, name: str, project_consumers: list[str]) -> dict[str, Any]:
        """describe_stream's stream (`stream`) and, for a view stream, the table streams that
        hold its offsets (`table_offsets`); an error naming show_streams when there is none."""
        stream, tables = described_stream(name, self.stream_records(project_consumers))
        return {"stream": stream, "table_offsets": tables}

    @available
    def explain_stream(
        self, node_id: str, model_name: str, config: dict[str, Any], target: BaseRelation | None
    ) -> list[str]:
        """explain_stream's lines: the path the model's next build would take, per stream,
        and why (streams/status/explain.py); nothing is consumed."""
        consumer = consumer_config(model_name, config)
        name = str(target) if target is not None else None
        refresh = ""
        if consumer.materialized_view and target is not None:
            properties = table_properties(self.run_rows, str(target))
            refresh = str(properties.get(REFRESH_PATH, ""))
            recomputes = str(properties.get(RECOMPUTES_INPUT, "false")) == "true"
            # a table built before the keys were kept: its estimate counts the whole input
            keys = json.loads(str(properties.get(RECOMPUTE_KEYS, "[]")))
            consumer = replace(
                consumer,
                recomputes_input=recomputes,
                recompute_keys=tuple((column, source) for column, source in keys),
            )
        return explain_consumer(self.run_rows, self._registry(), node_id, name, consumer, refresh)

    @available
    def stream_freshness(
        self,
        relation: BaseRelation,
        warn_after_hours: float | None = None,
        error_after_hours: float | None = None,
    ) -> list[dict[str, str]]:
        """The stream_fresh test's failing rows for the model `relation`
        (streams/status/freshness.py)."""
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
        """Forget a stream whose consumer has left the project (streams/status/streams.py).
        Its file set goes from the tables builds share: on an object store, in turn with the
        builds of other processes (lease.shared_writes)."""
        with lease.shared_writes(f"Stream {name}"):
            record = drop_stream(self.run_rows, self._registry(), name, project_consumers)
        return dict(vars(record))

    @available
    def check_contract_columns(
        self, model_name: str, target_columns: list[str], contract_columns: list[str]
    ) -> None:
        """A stream model's enforced contract names exactly the target's columns."""
        check_contract_columns(model_name, target_columns, contract_columns)

    def cleanup_connections(self) -> None:
        """dbt closes its connections at the end of every invocation: the registry is
        written then, once for all the invocation's builds, and every model's state goes."""
        try:
            self.flush_stream_registry()
        finally:
            for held in self._nodes.take_leases():
                lease.give_back(cast(lease.Lease, held))
            self._nodes.clear()
            forget_lost_servers()
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
                    recorded, rolled_forward = registry.flush(self._run_with_confs())
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


def _names(records: list[StreamRecord]) -> str:
    return ", ".join(sorted(record.name for record in records)) or "no stream"
