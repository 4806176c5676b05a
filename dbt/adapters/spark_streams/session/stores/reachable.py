"""Whether a server the profile names answers on its port, asked before the JVM starts (a
network metastore, an object store's endpoint): the JVM's own clients would retry far longer
than dbt's `connect_timeout`, and say little when they give up."""

import socket

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials


def unanswered(address: tuple[str, int], creds: SparkStreamsCredentials) -> str | None:
    """None when `address` takes a connection within connect_timeout x (connect_retries + 1);
    else why not, and how often it was asked ("Connection refused, 2 attempts of 10 s")."""
    attempts = 1 + max(0, creds.connect_retries)
    for _ in range(attempts):
        try:
            socket.create_connection(address, timeout=creds.connect_timeout).close()
            return None
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
    return f"{why}, {attempts} attempt{'s' if attempts > 1 else ''} of {creds.connect_timeout} s"
