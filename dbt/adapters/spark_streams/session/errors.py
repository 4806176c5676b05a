"""Spark's errors as a dbt user should read them: the error class and message, no JVM stack.

Delta's errors need help. On the embedded session PySpark formats a captured error through
Spark's error-class registry, which does not know Delta's classes: for a Delta error with a SQL
query context (a MERGE naming an unknown column, say), PySpark's own logging of the error calls
`getMessage()`, which fails with `[INTERNAL_ERROR] Cannot find main error class 'DELTA_...'`,
and that failure is raised in place of Delta's error (which it keeps as its `__context__`).
Delta errors PySpark does not convert (a broken CHECK constraint, a missing log file) arrive
as a Py4JJavaError whose text is the JVM's stack trace; the Java exception's own message is
Delta's, error class first. Over Spark Connect the server formats Delta's messages itself, but
appends its stack trace (`spark.sql.connect.serverStacktrace.enabled` is on by default) and
prefixes errors the client has no class for with the Java class name.

The message the user sees is the same either way; the original error, stack and all, goes to
dbt's debug log.
"""

import re
from collections.abc import Iterator
from contextlib import contextmanager

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from dbt.adapters.spark_streams.session.advice import without_harmful_advice
from dbt.adapters.spark_streams.session.servers.lost_servers import (
    server_unavailable,
    unavailable_message,
)
from dbt.adapters.spark_streams.streams.errors import SparkUnreachable
from dbt.adapters.spark_streams.versions import line_limit

logger = AdapterLogger("SparkStreams")

# PySpark asking the JVM to format an error class, which fails for Delta's classes.
FORMATTING_CALL = "SparkThrowableHelper.getMessage"
# Where PySpark (embedded or Connect) appends the JVM's stack trace to a message.
STACK_TRACE = "\n\nJVM stacktrace:\n"
# Spark Connect's prefix for a Java exception the client has no class for.
JAVA_CLASS_PREFIX = re.compile(r"^\([\w.$]+\) (?=\[)")
# Derby's error when the Hive metastore stores a view's text in its LONG VARCHAR columns, and
# the most characters those columns hold.
DERBY_VIEW_TEXT_LIMIT = "truncation error was encountered trying to shrink LONG VARCHAR"
DERBY_VIEW_TEXT_CHARS = 32_700
VIEW_TOO_LONG = (
    "This view's SQL is longer than the 32,700 characters a Hive metastore on Derby can store "
    "(the embedded session's metastore and the shared Derby metastore both are). Materialize "
    "the model as a table, split its SQL into several view models, or point Spark at a "
    "metastore on MySQL or PostgreSQL."
)

# A file system that filled up under a write: the warehouse's or Spark's scratch space.
DISK_FULL = "No space left on device"
DISK_FULL_SENTENCE = (
    "A file system Spark writes to is full (No space left on device): the warehouse's, or the "
    "local scratch space of a worker or the driver. A write that failed before its Delta "
    "commit left nothing behind and moved no offset; one that failed after it is found in the "
    "target's history by the next build. Free space there, then run again."
)

# A metastore's database with no connection left, as PostgreSQL and MySQL word it; Hive names
# it only in a cause deep in the stack ("Unable to open a test connection ...").
NO_CONNECTIONS = (
    "too many clients already",
    "too many connections for role",
    "Too many connections",
)
NO_CONNECTION_ADVICE = (
    "other processes hold all its connections. Each dbt process holds up to six (two pools of "
    "three); raise the server's max_connections (or the role's connection limit), or run "
    "fewer dbt processes at once"
)
NO_CONNECTIONS_SENTENCE = (
    f"The metastore's database has no connection left: {NO_CONNECTION_ADVICE}. A write that "
    "failed before its Delta commit moved no offset; one that failed after it is found in the "
    "target's history by the next build."
)

# An object store that stopped answering (S3A gave up after its retries), as the AWS SDK words
# it, and one that kept throttling (503 SlowDown).
STORE_UNANSWERED = (
    "Unable to execute HTTP request",
    "failed to respond",
    "ApiCallTimeoutException",
    "AWSApiCallTimeoutException",
)
STORE_THROTTLED = ("AWSServiceThrottledException", "SlowDown", "503 Slow Down")
STORE_PATH = re.compile(r"\bs3a?://[^\s,;:]*[^\s,;:.]")
STORE_AFTER = (
    "A write that failed before its Delta commit left nothing behind and moved no offset; one "
    "that failed after it is found in the target's history by the next build."
)


def _store_sentence(message: str, full_text: str) -> str | None:
    """The object store's failure in a sentence (None when the error is not one)."""
    throttled = any(words in full_text for words in STORE_THROTTLED)
    if not throttled and not any(words in full_text for words in STORE_UNANSWERED):
        return None
    found = STORE_PATH.search(full_text)
    where = f" {found[0]}" if found else " the warehouse"
    if throttled:
        what = f"The object store kept refusing Spark's requests for{where} with 503 Slow Down"
        fix = "Lower the load on that bucket prefix (fewer threads or processes), then run again."
    else:
        what = f"The object store stopped answering while Spark read or wrote{where}"
        fix = ("Check that the store is up and reachable at the profile's "
               "spark.hadoop.fs.s3a.endpoint, then run again.")  # fmt: skip
    said = message.strip().splitlines()[0]
    return f"{what}, after S3A's retries. {STORE_AFTER} {fix} Spark said: {said}"


@contextmanager
def readable_spark_errors() -> Iterator[None]:
    """Raise Spark's errors as dbt errors carrying the message `spark_error_message` gives."""
    try:
        yield
    except DbtRuntimeError:
        raise
    except Exception as exc:
        message = spark_error_message(exc)
        if message is None:
            raise
        error = _spark_error(exc)
        logger.debug(f"Spark error in full: {_full_text(error)}")
        raise (SparkUnreachable if server_unavailable(error) else DbtRuntimeError)(
            message
        ) from exc


def spark_error_message(exc: BaseException) -> str | None:
    """What to show for an error Spark raised: its class and message (None for any other
    error). A raw Py4J error is reduced to its Java exception's message."""
    error = _spark_error(exc)
    if server_unavailable(error):
        return unavailable_message(error)
    if isinstance(error, Py4JJavaError):
        return _explained(_java_message(error), _full_text(error))
    if isinstance(error, PySparkException):
        text = str(error)
        return _explained(JAVA_CLASS_PREFIX.sub("", text.split(STACK_TRACE, 1)[0]), text)
    return None


def _explained(message: str | None, full_text: str) -> str | None:
    """Errors the user cannot act on as Spark words them, said in their terms: a view too long
    for a Derby metastore, a metastore's database out of connections, a full disk (which
    Spark often names only in the cause of a "Task failed while writing rows", deep in the
    stack), an object store that stopped answering or kept throttling, and what an older
    Spark line cannot do (versions.py). Any other message
    without the advice that would lose data (session/advice.py)."""
    if message and DERBY_VIEW_TEXT_LIMIT in message:
        return VIEW_TOO_LONG
    if message and any(words in full_text for words in NO_CONNECTIONS):
        return f"{NO_CONNECTIONS_SENTENCE} Spark said: {message.strip().splitlines()[0]}"
    if message and DISK_FULL in full_text:
        return f"{DISK_FULL_SENTENCE} Spark said: {message.strip().splitlines()[0]}"
    store = _store_sentence(message, full_text) if message else None
    if store:
        return store
    limit = line_limit(full_text) if message else None
    if limit and message:
        return f"{limit} Spark said: {message.strip().splitlines()[0]}"
    return without_harmful_advice(message) if message else message


def _spark_error(exc: BaseException) -> BaseException:
    """The error Spark raised: behind PySpark's failure to format it, the one it was
    formatting."""
    while (
        isinstance(exc, Py4JJavaError)
        and FORMATTING_CALL in str(exc.errmsg)
        and exc.__context__ is not None
    ):
        exc = exc.__context__
    return exc


def _full_text(error: BaseException) -> str:
    """The error's whole text for the debug log (a Py4J error asks the JVM for it)."""
    try:
        return str(error)
    except Exception:
        return repr(error)


def _java_message(error: Py4JJavaError) -> str | None:
    """The Java exception's message when it starts with its error class (Spark's and Delta's
    do), else its class name and message; None when the JVM cannot be asked."""
    try:
        throwable = error.java_exception
        message = throwable.getMessage()
        if message and str(message).startswith("["):
            return str(message)
        return str(throwable.toString())
    except Exception:
        return None
