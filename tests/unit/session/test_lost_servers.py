"""A Spark Connect server found gone fails the rest of the invocation at once, with the message
of the failure that found it; dbt's end of the invocation forgets it."""

import inspect
import socket
import time
from collections.abc import Iterator

import grpc
import pytest
from dbt.adapters.exceptions import FailedToConnectError
from pyspark.errors import PySparkException
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.session.cursor import BoundCursor
from dbt.adapters.spark_streams.session.errors import spark_error_message
from dbt.adapters.spark_streams.session.servers.connect import new_connect_session
from dbt.adapters.spark_streams.session.servers.lost_servers import (
    forget_lost_servers,
    lost_message,
    server_unavailable,
)
from dbt.adapters.spark_streams.streams.delta.source import inspect_source
from dbt.adapters.spark_streams.streams.errors import SparkUnreachable
from dbt.adapters.spark_streams.streams.files.table import describe_file_table

GONE = (
    "<_MultiThreadedRendezvous of RPC that terminated with:\n\tstatus = StatusCode.UNAVAILABLE"
    '\n\tdetails = "failed to connect to all addresses; last error: Connection refused"\n>'
)


@pytest.fixture(autouse=True)
def nothing_lost() -> Iterator[None]:
    forget_lost_servers()
    yield
    forget_lost_servers()


class GoneRpc(grpc.RpcError):
    """gRPC's own error for a server that does not answer."""

    def __init__(self, text: str) -> None:
        self.text = text

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def __str__(self) -> str:
        return self.text


def unavailable(message: str = GONE) -> SparkConnectGrpcException:
    """The error the installed client raises for a server gone: PySpark 4.1 and later carry
    the status on it; 4.0 raises it from gRPC's error, which carries it."""
    if "grpc_status_code" in inspect.signature(SparkConnectGrpcException.__init__).parameters:
        return SparkConnectGrpcException(
            message=message,
            grpc_status_code=grpc.StatusCode.UNAVAILABLE,  # type: ignore[call-arg]
        )
    try:
        try:
            raise GoneRpc(message)
        except GoneRpc as rpc:
            raise SparkConnectGrpcException(str(rpc)) from None
    except SparkConnectGrpcException as raised:
        return raised


def test_unavailable_is_told_in_the_users_terms() -> None:
    assert server_unavailable(unavailable())
    assert not server_unavailable(SparkConnectGrpcException(message="x"))
    assert spark_error_message(unavailable()) == (
        "The Spark Connect server stopped answering (UNAVAILABLE: failed to connect to all "
        "addresses; last error: Connection refused) and did not come back while the statement "
        "was retried (connect_timeout, connect_retries). If the server had received this "
        "model's write, it may have committed it, with its offsets, before it went; the next "
        "build reads that from the target's history, so nothing is consumed twice or lost "
        "either way. Run again once the server is back."
    )


def test_the_address_grpc_tried_reads_as_typed() -> None:
    refused = GONE.replace(
        "last error: Connection refused",
        "last error: UNKNOWN: ipv6:%5B::1%5D:15002: Failed to connect to remote host",
    )
    error = unavailable(refused)
    assert (
        "(UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: "
        "ipv6:[::1]:15002: Failed to connect to remote host)" in spark_error_message(error)
    )


class GoneSession:
    def sql(self, statement: str) -> None:
        raise unavailable()


def test_a_statement_that_finds_the_server_gone_fails_the_next_connection_at_once() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        host = f"sc://127.0.0.1:{probe.getsockname()[1]}"
    cursor = BoundCursor(GoneSession(), address=host)  # type: ignore[arg-type]
    with pytest.raises(Exception, match="stopped answering"):
        cursor.execute("select 1")
    assert "stopped answering (UNAVAILABLE" in (lost_message(host) or "")
    creds = SparkStreamsCredentials.from_dict(
        {"schema": "s", "method": "connect", "host": host, "connect_timeout": 30}
    )
    began = time.monotonic()
    with pytest.raises(FailedToConnectError, match=r"stopped answering .* earlier in this run"):
        new_connect_session(creds)
    assert time.monotonic() - began < 15  # not the 30 s x 2 the profile would wait
    forget_lost_servers()
    assert lost_message(host) is None


class SessionOfALostServer:
    """What a thread's session does once another thread's statement found the server gone:
    Spark Connect's client refuses with its own error, which says nothing of the server."""

    def sql(self, statement: str) -> None:
        raise PySparkException("[NO_ACTIVE_SESSION] No active Spark session found.")


def test_errors_that_follow_a_lost_server_say_so() -> None:
    host = "sc://127.0.0.1:1"
    cursor = BoundCursor(GoneSession(), address=host)  # type: ignore[arg-type]
    with pytest.raises(SparkUnreachable, match="stopped answering"):
        cursor.execute("select 1")
    other = BoundCursor(SessionOfALostServer(), address=host)  # type: ignore[arg-type]
    with pytest.raises(SparkUnreachable) as found:
        other.execute("select 2")
    assert found.value.msg.startswith("The Spark Connect server stopped answering")
    assert found.value.msg.endswith("(found earlier in this run)")
    assert "NO_ACTIVE_SESSION" not in str(found.value)


def test_a_source_read_passes_a_lost_server_through() -> None:
    """Not "cannot read source ... Check that the table exists": the table is fine."""

    def run(statement: str) -> list:
        raise SparkUnreachable("The Spark Connect server stopped answering")

    with pytest.raises(SparkUnreachable):
        inspect_source(run, "`raw`.`customers`", "mirror__customers")
    with pytest.raises(SparkUnreachable):
        describe_file_table(run, "raw", "events", "audit__events")
