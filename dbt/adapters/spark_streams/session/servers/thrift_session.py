"""A Spark Thrift Server session's confs: the profile's server_side_parameters SET as it opens.

dbt-spark hands server_side_parameters to the server in the session's opening configuration,
as they are. The Spark Thrift Server passes on to its Spark session only the keys written
`set:hiveconf:<key>`: a plain key (dbt-spark's own `spark.sql.ansi.enabled`, the adapter's
ALL_FILES_IN_CRC, a user's `spark.sql.shuffle.partitions`) had no effect. So each plain key is
SET on the session as it opens, as a Spark Connect session sets them (connect.py), and
a key the server refuses fails the connection with a sentence naming it.

A secret is not SET (a key whose value is one, or a value holding a URL's password or a
token): the server writes each statement it runs to its log. Such a key goes to the server's
own configuration; the adapter says so once per key and process. A switch or a class's name
under a secret-looking key (fs.azure.sas.token.provider.type) is a setting, and is SET.
"""

import re
from collections.abc import Mapping
from contextlib import closing
from threading import Lock

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.redaction import holds_secret, scrubbed, secrets_in
from dbt.adapters.spark_streams.session.servers.lost_servers import thrift_server_lost

logger = AdapterLogger("SparkStreams")

# The opening configuration's own prefixes, which the server reads itself
SERVER_PREFIXES = ("set:", "use:")

# PyHive's error holds the server's whole response, stack and all; its errorMessage says it
ERROR_MESSAGE = re.compile(r"errorMessage=(['\"])(?P<message>.*?)\1\)")
CLASS_PREFIX = re.compile(r"^(Error running query: )?(\[\w+\] )?([\w.$]+(Exception|Error): )?")

_WARNED: set[str] = set()
_LOCK = Lock()


def session_sets(parameters: Mapping[str, object]) -> tuple[list[tuple[str, str]], list[str]]:
    """The (key, value) pairs to SET on a new session, in the profile's order, and the secret
    keys left out. Keys with the server's own prefixes (`set:hiveconf:...`) are left to it."""
    sets, secrets = [], []
    for key, value in parameters.items():
        name = str(key).strip()
        if name.lower().startswith(SERVER_PREFIXES):
            continue
        if holds_secret(name, value) or secrets_in(str(value)):  # (a URL's password, a token)
            secrets.append(name)
            continue
        sets.append((name, str(value).strip()))
    return sets, secrets


def set_statement(key: str, value: str) -> str:
    """Spark's SET of a conf; a key with other characters than a conf name's is quoted."""
    quoted = key if all(c.isalnum() or c in "._-" for c in key) else f"`{key}`"
    return f"set {quoted}={value}"


def with_session_parameters(connection: Connection) -> Connection:
    """server_side_parameters SET on the new session of `connection` (a `thrift` one), through
    PyHive's own cursor (dbt-spark's wrapper closes the connection with its cursor)."""
    creds = connection.credentials
    sets, secrets = session_sets(creds.server_side_parameters)
    _say_secrets_left_out(secrets)
    address = f"{creds.host}:{creds.port}"
    refused = None
    with closing(connection.handle.handle.cursor()) as cursor:
        for key, value in sets:
            try:
                cursor.execute(set_statement(key, value))
            except Exception as exc:
                refused = _refused(creds, address, key, exc)
                break
            logger.debug(f"Set {key} on the server's session")
    if refused is not None:
        _close_failed(connection)
        raise FailedToConnectError(refused)
    return connection


def _close_failed(connection: Connection) -> None:
    """The refused session closed on the server at once (not left open until dbt closes its
    connections), and the connection marked failed, as dbt marks one that did not open."""
    try:
        connection.handle.close()
    except Exception as exc:  # a lost server: nothing left to close there
        logger.debug(f"Closing the refused session: {exc}")
    connection.handle = None
    connection.state = ConnectionState.FAIL


def _refused(creds: SparkStreamsCredentials, address: str, key: str, exc: Exception) -> str:
    """A lost server's sentence, or the refusal's naming the key and where it goes instead."""
    lost = thrift_server_lost(creds, exc)
    if lost is not None:
        return lost
    said = scrubbed(server_message(exc), creds.secrets())
    return refusal("Spark Thrift Server", address, key, said)


def refusal(server: str, address: str, key: str, said: str) -> str:
    """A server's refusal of a conf of server_side_parameters for one session, in a sentence
    (over `thrift` and over `connect`)."""
    return (
        f"The {server} at {address} refused server_side_parameters' {key} for the session "
        f"({said.rstrip('.')}). A session can set only Spark SQL confs that are not static: give "
        "this one to the server as it starts (--conf or spark-defaults.conf), or take it out "
        "of the profile."
    )


def server_message(exc: Exception) -> str:
    """The server's message in PyHive's error (its errorMessage, without the classes'
    names before it), or the error's whole text on one line."""
    text = " ".join(str(exc).split())
    found = ERROR_MESSAGE.search(text)
    return CLASS_PREFIX.sub("", found.group("message")) if found else text


def _say_secrets_left_out(secrets: list[str]) -> None:
    with _LOCK:
        new = [key for key in secrets if key not in _WARNED]
        _WARNED.update(new)
    for key in new:
        logger.warning(
            f"server_side_parameters' {key} holds a secret and is not SET on the Spark Thrift "
            "Server's session (the server writes each statement to its log): give it to the "
            "server as it starts (--conf or spark-defaults.conf)."
        )
