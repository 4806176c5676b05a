"""Stream errors: each names the stream, the object and the fix."""

from dbt_common.exceptions import DbtRuntimeError


class StreamError(DbtRuntimeError):
    """A stream cannot be read or consumed as asked; nothing was written."""


class StreamConsumedElsewhere(StreamError):
    """Another run consumed the stream first; this build's write did not land."""
