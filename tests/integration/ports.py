"""A free TCP port on localhost, for the servers the integration tests start."""

import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return int(probe.getsockname()[1])
