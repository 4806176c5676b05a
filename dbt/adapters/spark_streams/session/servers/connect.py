"""Spark Connect: the way to run on a cluster instead of the embedded session.

The client dials `host` with the profile's `token` and TLS settings. Before a session is made
the channel must come up within `connect_timeout` seconds, tried `connect_retries` more times:
a server that is not there fails the connection in that bound, naming the address, instead of
the client's own retries (up to ten minutes). A session's statements then retry a server that
went away for about as long before they fail. No error the adapter raises quotes a secret.
"""

import socket
import ssl
import warnings
from pathlib import Path
from typing import Any, cast

import grpc
from dbt.adapters.exceptions import FailedToConnectError
from pyspark.sql import SparkSession
from pyspark.sql.connect.client import DefaultChannelBuilder
from pyspark.sql.connect.client.retries import DefaultPolicy
from pyspark.sql.connect.session import SparkSession as ConnectSession

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.redaction import masked, scrubbed
from dbt.adapters.spark_streams.session.servers.lost_servers import lost_message, note_lost
from dbt.adapters.spark_streams.session.servers.thrift_session import refusal
from dbt.adapters.spark_streams.versions import accepted_keywords

# Spark's client warns once it has given up retrying a lost server; the adapter's error for it
# says the same in the user's terms (lost_servers.py), so the warning only adds a line of
# Python internals to dbt's output.
warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]")


class ProfileChannelBuilder(DefaultChannelBuilder):
    """Spark's channel builder, trusting the profile's CA file (`ca_cert`) for TLS instead of
    the system's roots: gRPC takes the roots when the channel is made, not from a setting."""

    def __init__(self, url: str, ca_cert: str | None) -> None:
        super().__init__(url)
        self.ca_cert = ca_cert

    def uses_tls(self) -> bool:
        """As Spark's client decides: `use_ssl`, or a token sent anywhere but localhost (a
        token is never sent in the clear over the network)."""
        return self.use_ssl or (self.token is not None and self.host != "localhost")

    def toChannel(self) -> grpc.Channel:
        if not (self.ca_cert and self.uses_tls()):
            return super().toChannel()
        creds = grpc.ssl_channel_credentials(root_certificates=Path(self.ca_cert).read_bytes())
        if self.token is not None:
            call = grpc.access_token_call_credentials(self.token)
            creds = grpc.composite_channel_credentials(creds, call)
        return self._secure_channel(self.endpoint, creds)


def new_connect_session(creds: SparkStreamsCredentials) -> SparkSession:
    """A new Spark Connect session on `host` (sc://...), with its own confs and temporary
    views on the server; the server owns catalog and jars. The session's first calls already
    retry as the profile says, and a session that fails to open is closed: Spark's client
    would otherwise call the server once more at the process's exit, retrying a lost server
    for up to ten minutes."""
    try:
        channels = ProfileChannelBuilder(creds.connect_url(), creds.ca_cert)
        wait_until_ready(channels, creds)
        session = ConnectSession.builder.channelBuilder(channels).create()
    except FailedToConnectError:
        raise
    except Exception as exc:
        raise connection_failure(creds, exc) from None
    key = None  # the conf being set, once the server is called
    try:
        session.client.set_retry_policies([retry_policy(creds)])
        # The first calls to the server (dbt-spark always sets spark.sql.ansi.enabled): a
        # token it refuses fails here, at the connection, not at a model's first statement.
        for key, value in creds.server_side_parameters.items():
            session.conf.set(key, value)
    except Exception as exc:
        session.client.close()
        refused = _conf_refused(creds, key, exc) if key is not None else None
        raise refused or connection_failure(creds, exc) from None
    return cast(SparkSession, session)  # the same API, for dbt-spark's cursor


def wait_until_ready(channels: ProfileChannelBuilder, creds: SparkStreamsCredentials) -> None:
    """Wait for the channel to come up, `connect_timeout` seconds a try; an error naming the
    address and what to check when it never does."""
    address = str(creds.host)
    found_gone = lost_message(address)
    if found_gone is not None:
        raise FailedToConnectError(f"{found_gone} (found earlier in this run)")
    attempts = 1 + max(0, creds.connect_retries)
    for _ in range(attempts):
        channel = channels.toChannel()
        try:
            grpc.channel_ready_future(channel).result(timeout=creds.connect_timeout)
            return
        except grpc.FutureTimeoutError:
            continue
        finally:
            channel.close()
    why = why_no_channel(channels, min(2, creds.connect_timeout))
    if why is None:
        message = (
            f"No Spark Connect server answered at {masked(address)} within "
            f"{creds.connect_timeout} s ({attempts} attempt{'s' if attempts > 1 else ''}, "
            "connect_timeout x (connect_retries + 1)). Check that the server runs and listens "
            "on that host and port, and that nothing between blocks the port."
        )
    else:
        message = f"Could not open a Spark Connect channel to {masked(address)}: {why}."
    note_lost(address, message)
    raise FailedToConnectError(message)


def why_no_channel(channels: ProfileChannelBuilder, timeout: float) -> str | None:
    """Why no gRPC channel came up although something may listen: a TCP connection and, for
    TLS, a handshake with the profile's CA, which say what gRPC's wait does not. None when
    nothing accepts connections at the address."""
    host, port = channels.endpoint.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as raw:
            if not channels.uses_tls():
                return (
                    "the port accepts connections, but no gRPC channel came up over them; if "
                    "the server (or a proxy in front of it) speaks TLS, set use_ssl: true"
                )
            tls = ssl.create_default_context(cafile=channels.ca_cert)
            tls.set_alpn_protocols(["h2"])
            with tls.wrap_socket(raw, server_hostname=host.strip("[]")):
                return "TLS is set up, but no gRPC channel came up; check host and port"
    except ssl.SSLError as exc:
        return (
            f"the TLS handshake failed ({exc.reason or exc}); if the server's certificate is "
            "signed by your own certificate authority, set ca_cert to that CA's PEM file, and "
            "check that the server speaks TLS at all (use_ssl)"
        )
    except OSError:
        return None


def retry_policy(creds: SparkStreamsCredentials) -> DefaultPolicy:
    """The client's retries of a statement whose server went away: `connect_retries` more
    tries, each after at most `connect_timeout` seconds, so a build fails in about the bound
    a connection has, instead of after ten minutes."""
    timeout_ms = max(1, creds.connect_timeout) * 1000
    options = {
        "max_retries": max(0, creds.connect_retries) + 1,
        "initial_backoff": min(1000, timeout_ms),
        "backoff_multiplier": 2.0,
        "max_backoff": timeout_ms,
        "max_server_retry_delay": timeout_ms,  # PySpark 4.1 and later
    }
    return DefaultPolicy(**accepted_keywords(DefaultPolicy.__init__, options))


def _conf_refused(
    creds: SparkStreamsCredentials, key: str, exc: Exception
) -> FailedToConnectError | None:
    """A conf the server refuses for a session (Spark's CANNOT_MODIFY_STATIC_CONFIG,
    CANNOT_MODIFY_CONFIG) said in a sentence naming it; None for another error."""
    message = str(exc).split("JVM stacktrace:")[0]  # (the server's stack, when it sends it)
    said = scrubbed(" ".join(message.split()), creds.secrets())
    if "CANNOT_MODIFY_" not in said:
        return None
    address = str(masked(str(creds.host)))
    return FailedToConnectError(refusal("Spark Connect server", address, key, said))


def connection_failure(creds: SparkStreamsCredentials, exc: Any) -> FailedToConnectError:
    """The error of a connection that failed for another reason (a refused token, a TLS
    mismatch, a bad URL), with every secret of the profile taken out of the client's text."""
    said = scrubbed(str(exc), creds.secrets()).rstrip(".")
    return FailedToConnectError(
        f"Could not open a Spark Connect session at {masked(str(creds.host))}: {said}. "
        "Check host (sc://<host>:<port>), token and use_ssl / ca_cert."
    )
