"""Spark Connect's client side, without a server: an address nobody answers on fails within
connect_timeout x (connect_retries + 1) naming it, statements retry a lost server about as
long, and no error quotes the profile's token."""

import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.session.servers.connect import (
    ProfileChannelBuilder,
    connection_failure,
    new_connect_session,
    retry_policy,
    why_no_channel,
)
from scripts.tls_proxy import throwaway_ca

TOKEN = "tok-abcdef123456"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def credentials(**profile: object) -> SparkStreamsCredentials:
    return SparkStreamsCredentials.from_dict(
        {"schema": "analytics", "method": "connect", **profile}
    )


def test_nobody_listening_fails_within_the_bound_and_names_the_address() -> None:
    port = closed_port()
    creds = credentials(
        host=f"sc://127.0.0.1:{port}", token=TOKEN, connect_timeout=1, connect_retries=1
    )
    began = time.monotonic()
    with pytest.raises(FailedToConnectError) as raised:
        new_connect_session(creds)
    # the bound (2 x 1 s) plus slack for a loaded CI machine; without the bound it hung 120 s+
    assert time.monotonic() - began < 1 * 2 + 10
    message = str(raised.value)
    assert f"No Spark Connect server answered at sc://127.0.0.1:{port} within 1 s" in message
    assert "2 attempts" in message and TOKEN not in message


def test_other_failures_lose_the_profiles_secrets() -> None:
    creds = credentials(host="sc://h:1", token=TOKEN)
    error = connection_failure(creds, RuntimeError(f"refused sc://h:1/;token={TOKEN} ({TOKEN})"))
    assert TOKEN not in str(error) and "*****" in str(error)
    assert "Could not open a Spark Connect session at sc://h:1: refused" in str(error)


def test_a_lost_server_is_retried_about_as_long_as_a_connection_waits() -> None:
    policy = retry_policy(credentials(host="sc://h:1", connect_timeout=5, connect_retries=2))
    assert policy.max_retries == 3
    assert policy.max_backoff == 5000 and policy.initial_backoff == 1000
    # a delay the server asks for is capped alike, where the client has the setting (4.1+)
    assert getattr(policy, "max_server_retry_delay", 5000) == 5000


def test_a_ca_file_is_trusted_only_for_tls(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate")
    plain = ProfileChannelBuilder("sc://localhost:15002", str(ca))
    plain.toChannel().close()  # no TLS: the file is not read
    with pytest.raises(FileNotFoundError):
        ProfileChannelBuilder("sc://h:15002/;use_ssl=true", str(tmp_path / "none.pem")).toChannel()


def test_a_token_to_another_host_goes_over_tls_with_the_ca_file(tmp_path: Path) -> None:
    """Spark's client switches TLS on for a token sent anywhere but localhost: the profile's
    CA must be the one it trusts then too."""
    missing = str(tmp_path / "none.pem")
    assert ProfileChannelBuilder("sc://h:15002/;token=t", missing).uses_tls()
    assert not ProfileChannelBuilder("sc://localhost:15002/;token=t", missing).uses_tls()
    with pytest.raises(FileNotFoundError):
        ProfileChannelBuilder("sc://h:15002/;token=t", missing).toChannel()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port that accepts connections and never speaks gRPC."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


def test_a_port_that_answers_without_grpc_is_told_apart(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    assert (
        why_no_channel(ProfileChannelBuilder(f"sc://127.0.0.1:{closed_port()}", None), 1) is None
    )
    said = why_no_channel(ProfileChannelBuilder(f"sc://127.0.0.1:{port}", None), 1)
    assert said is not None and "set use_ssl: true" in said


def test_a_certificate_from_an_unknown_ca_is_named(tmp_path: Path) -> None:
    files = throwaway_ca(tmp_path)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(files["server.pem"], files["server.key"])
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        handshakes = threading.Thread(target=serve_handshakes, args=(server, tls, 2), daemon=True)
        handshakes.start()
        url = f"sc://localhost:{port}/;use_ssl=true"
        untrusted = why_no_channel(ProfileChannelBuilder(url, None), 2)
        trusted = why_no_channel(ProfileChannelBuilder(url, str(files["ca.pem"])), 2)
    assert untrusted is not None and "CERTIFICATE_VERIFY_FAILED" in untrusted
    assert "set ca_cert to that CA's PEM file" in untrusted
    assert trusted == "TLS is set up, but no gRPC channel came up; check host and port"


def serve_handshakes(server: socket.socket, tls: ssl.SSLContext, count: int) -> None:
    for _ in range(count):
        client, _ = server.accept()
        with contextlib.suppress(OSError), tls.wrap_socket(client, server_side=True):
            pass
        client.close()
