"""Spark servers (Spark Connect, a Thrift Server) found gone during this dbt invocation.

When a server dies in the middle of a build, every model still to run would open a connection
and wait the profile's whole bound (connect_timeout x (connect_retries + 1)) before failing, a
thread at a time: a build of thirty nodes on four threads took three bounds to fail. Once a
connection or a statement has found the server gone, the rest of the invocation fails at once
with the same message. dbt forgets it when the invocation ends (cleanup_connections), so the
next command, or an in-process caller, tries again.
"""

import re
import threading
from collections.abc import Iterator
from urllib.parse import unquote

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials, StreamsConnectionMethod
from dbt.adapters.spark_streams.streams.errors import SparkUnreachable
from dbt.adapters.spark_streams.versions import grpc_status_name

_LOST: dict[str, str] = {}
_LOCK = threading.Lock()
GRPC_DETAILS = re.compile(r'details = "([^"]*)"')
# What a lost server means for the model's write and its streams, and what to do.
AFTER_LOSS = (
    "If the server had received this model's write, it may have committed it, with its "
    "offsets, before it went; the next build reads that from the target's history, so nothing "
    "is consumed twice or lost either way. Run again once the server is back."
)
# dbt-spark's methods that reach a HiveServer2 (a Spark Thrift Server) over Thrift.
HIVESERVER2_METHODS = (StreamsConnectionMethod.THRIFT, StreamsConnectionMethod.HTTP)


def lost_message(address: str) -> str | None:
    """The message of the failure that found the server at `address` gone, if one did."""
    with _LOCK:
        return _LOST.get(address)


def note_lost(address: str, message: str) -> None:
    with _LOCK:
        _LOST.setdefault(address, message)


def forget_lost_servers() -> None:
    with _LOCK:
        _LOST.clear()


def server_unavailable(exc: BaseException | None) -> bool:
    """Whether the error (or one it came from) is Spark Connect's client giving up on a
    server that does not answer (gRPC's UNAVAILABLE, after the client's retries).

    The code is compared by name: this module is imported by every session, and grpc is only
    installed with the connect extra. Where the status is kept differs between PySpark
    versions (versions.py)."""
    return any(grpc_status_name(error) == "UNAVAILABLE" for error in chain(exc))


def unavailable_message(exc: BaseException) -> str:
    """What to tell the user when a statement's server went away and did not come back."""
    details = GRPC_DETAILS.search(str(exc))
    # gRPC writes the address it tried as a URI (ipv6:%5B::1%5D:15002): shown as typed
    why = unquote(details.group(1)) if details else "no answer"
    return (
        f"The Spark Connect server stopped answering (UNAVAILABLE: {why}) and did not come "
        f"back while the statement was retried (connect_timeout, connect_retries). {AFTER_LOSS}"
    )


def chain(error: BaseException | None) -> Iterator[BaseException]:
    """The error and the ones it came from."""
    while error is not None:
        yield error
        error = error.__cause__ or error.__context__


def thrift_server_lost(creds: SparkStreamsCredentials, error: BaseException) -> str | None:
    """For a HiveServer2 method, the sentence for a statement whose server went away (Thrift's
    transport closed under it), noted so that the rest of the run fails at once; else None."""
    if StreamsConnectionMethod(creds.method) not in HIVESERVER2_METHODS:
        return None
    transport = next((e for e in chain(error) if type(e).__name__ == "TTransportException"), None)
    if transport is None:
        return None
    address = f"{creds.host}:{creds.port}"
    message = (
        f"The Spark Thrift Server at {address} stopped answering (TTransportException: "
        f"{transport}). {AFTER_LOSS}"
    )
    note_lost(address, message)
    return lost_message(address)


# HiveServer2 describes a result's columns in Hive's types, which have no VARIANT.
VARIANT_OVER_THRIFT = "Unrecognized type name: variant"


def thrift_refusal(creds: SparkStreamsCredentials, error: BaseException) -> str | None:
    """For a HiveServer2 method, the sentence for a result the Thrift Server cannot send."""
    if StreamsConnectionMethod(creds.method) not in HIVESERVER2_METHODS:
        return None
    if not any(VARIANT_OVER_THRIFT in str(e) for e in chain(error)):
        return None
    return (
        f"The Spark Thrift Server at {creds.host}:{creds.port} cannot return a VARIANT column "
        "(HiveServer2 describes results in Hive's types, which have no VARIANT), and this "
        "statement's result has one. Build models that read tables with VARIANT columns over "
        "method: connect or session, or leave the VARIANT columns out of their sources."
    )


def thrift_error(creds: SparkStreamsCredentials, error: BaseException) -> Exception | None:
    """What to raise for a HiveServer2 statement's failure told in a sentence: its server
    lost (SparkUnreachable) or a result the server cannot send; None for any other."""
    lost = thrift_server_lost(creds, error)
    if lost is not None:
        return SparkUnreachable(lost)
    refusal = thrift_refusal(creds, error)
    return DbtRuntimeError(refusal) if refusal is not None else None
