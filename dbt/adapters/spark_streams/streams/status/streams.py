"""The run-operations on streams: every stream with its staleness now (show_streams), one
stream with its table offsets (describe_stream), and a stream whose consumer left the project
forgotten (drop_stream). Each stream's staleness is asked of its kind."""

from typing import Any

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.choose import kind_of_record
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.views.algebra import TABLE_STREAM_SEPARATOR


def stream_status(run: RunSql, registry: Registry, record: StreamRecord) -> dict[str, Any]:
    """The stream's record with its `stale`, `stale_after` and `stale_reason` now."""
    return {**vars(record), **kind_of_record(record).status(run, registry, record)}


def stream_statuses(
    run: RunSql, registry: Registry, project_consumers: list[str] | None
) -> list[dict[str, Any]]:
    """Every registered stream with its staleness now; `owner_gone` when its consumer is not
    among the project's stream_incremental models."""
    consumers = set(project_consumers or ())
    return [
        {**stream_status(run, registry, record), "owner_gone": record.consumer not in consumers}
        for record in registry.all()
    ]


def described_stream(
    name: str, statuses: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The stream called `name` among `statuses`, and the table streams that hold its offsets
    when it is a view stream; an error naming the listing when there is none."""
    found = [status for status in statuses if status["name"] == name]
    if not found:
        raise StreamError(
            f"No stream named '{name}'. Run `dbt run-operation show_streams` to list the streams."
        )
    prefix = name + TABLE_STREAM_SEPARATOR
    return found[0], [status for status in statuses if status["name"].startswith(prefix)]


def drop_stream(
    run: RunSql, registry: Registry, name: str, project_consumers: list[str]
) -> StreamRecord:
    """Forget a stream whose consumer has left the project: its registry rows, and whatever
    else its kind kept (the source is untouched). A live consumer keeps its stream: its
    target's commits carry the offset, so a registry entry dropped under it would come back
    on its next build."""
    record = registry.get(name)
    if record is None:
        raise StreamError(
            f"No stream named '{name}'. Run `dbt run-operation show_streams` to list the streams."
        )
    if record.consumer in project_consumers:
        raise StreamError(
            f"Stream {name} is consumed by {record.consumer}, which is still in the project, "
            "so it is not dropped. Remove or rename that model first, or rebuild it with "
            "--full-refresh to start its stream over."
        )
    registry.drop(name)
    kind_of_record(record).dropped(run, registry, record)
    return record
