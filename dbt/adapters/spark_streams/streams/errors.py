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
