"""Stream errors: each names the stream, the object and the fix."""

from dbt_common.exceptions import DbtRuntimeError


class StreamError(DbtRuntimeError):
    """A stream cannot be read or consumed as asked; nothing was written."""


class StreamConsumedElsewhere(StreamError):
    """Another run consumed the stream first; this build's write did not land."""


class SparkUnreachable(DbtRuntimeError):
    """Spark itself stopped answering (a Spark Connect server gone). The error is about the
    connection, not about a stream or its source: no stream wraps it in an error of its own
    (which would send the user looking for a missing table)."""


def reads_no_stream(model: str) -> StreamError:
    """A `stream_incremental` model that calls no stream() of its own: it has no offsets, so
    every run would write all of its rows again (an append duplicates them)."""
    return StreamError(
        f"Model {model}: a stream_incremental model consumes the streams its own SQL reads "
        f"with stream(), and {model} calls none, so every run would write all of its rows "
        f"again. Call stream(source(...)) or stream(ref(...)) in {model} itself (one in an "
        "ephemeral model it reads is a peek that never moves), or make it a table or an "
        "incremental model."
    )
