"""explain_stream: the path a model's next build would take, per stream, without consuming.

A table or file stream's build always reads its changes since its offset. A view stream's
build reads one term per changed table, other tables through the change set's join-key
ranges, and may rebuild its target instead when that is cheaper (kinds/view_path.py): the
report says which and why, from the offsets of the target's last stream commit (where they
count; the registry's when the target has none), the tables' latest versions and Delta's
file statistics. A materialized view over an outer join has table streams alone; its refresh
recomputes groups from its tables read whole, and the report says whether the estimate
(views/cost.py) makes it a full refresh.
"""

from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.kinds.view_path import (
    explain_joined_path,
    explain_view_path,
)
from dbt.adapters.spark_streams.streams.offsets.commit import latest_commit_for
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.views.algebra import TABLE_STREAM_SEPARATOR


def explain_consumer(
    run: RunSql,
    registry: Registry,
    node_id: str,
    target: str | None,
    consumer: ConsumerConfig,
    refresh: str = "",
) -> list[str]:
    """The report's lines for the model `node_id` whose target is `target` (None: missing);
    for a materialized view, `refresh` says how its last build said it refreshes."""
    heading = f"{consumer.model} ({consumer.strategy}, incremental: {consumer.incremental})"
    if consumer.materialized_view:
        heading = f"{consumer.model} (materialized_view; {refresh or 'not built yet'})"
    records = _committed_records(run, registry, node_id, target)
    if target is None or not records:
        return [heading, "  no streams yet: the next build creates the target and its streams"]
    offsets = {record.name: record.offset_version for record in records}
    # a view stream's table streams are reported under it; a materialized view over an
    # outer join has table streams alone
    views = any(record.source_type == "view" for record in records)
    streams = [r for r in records if TABLE_STREAM_SEPARATOR not in r.name or not views]
    lines = [heading]
    for record in streams:
        if record.source_type != "view":
            lines.append(
                f"stream {record.name} on {record.source_type} {record.source_table}: "
                f"incremental (reads its changes after version {record.offset_version})"
            )
            continue
        lines.append(f"stream {record.name} on view {record.source_table}:")
        lines += explain_view_path(run, record, offsets, consumer, alone=len(streams) == 1)
    if consumer.materialized_view and not views:
        lines.append(f"  path: {explain_joined_path(run, records, consumer)}")
    return lines


def _committed_records(
    run: RunSql, registry: Registry, node_id: str, target: str | None
) -> list[StreamRecord]:
    """The consumer's stream records: its target's last stream commit's, else the registry's."""
    commit = latest_commit_for(run, target, node_id) if target is not None else None
    if commit is not None and not commit.fresh_target:
        return list(commit.records)
    return [record for record in registry.all() if record.consumer == node_id]
