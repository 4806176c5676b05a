"""Who consumes a stream: one consumer per stream, a stream whose consumer left the project
taken over, and each stream's registry record read once per build."""

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord


def registered(registry: Registry, build: StreamBuild, name: str) -> StreamRecord | None:
    """The stream's registry record, read once per build (reconciliation may have read it)."""
    if name not in build.registered:
        build.registered[name] = registry.get(name)
    return build.registered[name]


def check_consumer(
    build: StreamBuild, request: StreamRequest, existing: StreamRecord | None
) -> bool:
    """Refuse a second consumer; True when this build takes over a stream whose consumer is
    no longer a stream_incremental model of the project (it then starts the stream over)."""
    if not build.consuming:
        return False
    others = list(request.other_consumers)
    owner = existing.consumer if existing is not None else None
    taking_over = owner not in (None, build.consumer, *others) and _owner_gone(build, owner)
    if owner not in (None, build.consumer, *others) and not taking_over:
        others.append(str(owner))
    if others:
        raise StreamError(
            f"Stream {request.name} is consumed by {', '.join(others)}; {build.consumer} cannot "
            "consume it too (one consumer per stream). Give one of them its own stream with "
            "stream(..., name='another_name'), or peek from a non-incremental model."
        )
    if taking_over:
        _take_over(build, request, str(owner))
    return taking_over


def _owner_gone(build: StreamBuild, owner: str | None) -> bool:
    """Whether the stream's consumer has left the project (deleted, renamed, or no longer a
    stream_incremental model). Unknown when the caller could not list the project's models."""
    return bool(build.project_consumers) and owner not in build.project_consumers


def _take_over(build: StreamBuild, request: StreamRequest, owner: str) -> None:
    """A model takes over a stream whose consumer is gone. Its target never held the stream's
    rows, so the stream starts over (as on a first build); a target that already exists must
    be rebuilt for that, or it would mix the stream's rows with whatever it holds."""
    if build.target_exists and not build.full_refresh:
        raise StreamError(
            f"Stream {request.name} belonged to {owner}, which is no longer in the project. "
            f"{build.consumer} can take it over by starting it again from the source's current "
            "rows, which needs its target rebuilt: run it once with --full-refresh (or drop the "
            f"stream with `dbt run-operation drop_stream --args '{{name: {request.name}}}'`)."
        )
    build.warnings.append(
        f"Stream {request.name}: taken over by {build.consumer} from {owner}, which is no "
        "longer in the project; the stream starts again from the source's current rows."
    )
