"""The embedded JVM's secret confs (the metastore's password, an object store's secret key)
travel in a properties file only its owner can read, not as arguments: PySpark starts
spark-submit with every conf of the builder as `--conf key=value` on its command line, which
any user of the machine sees in a process listing. The file lives in a private temporary
folder for the start only; Spark reads it with `--properties-file` and redacts the keys
wherever it prints its confs.
"""

import os
import shlex
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from dbt.adapters.spark_streams.redaction import is_secret_conf

SUBMIT_ARGS = "PYSPARK_SUBMIT_ARGS"


def split_secrets(confs: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(the confs safe on a command line, the secret ones)."""
    public = {key: value for key, value in confs.items() if not is_secret_conf(key)}
    secret = {key: value for key, value in confs.items() if is_secret_conf(key)}
    return public, secret


def properties_line(key: str, value: str) -> str:
    """`key=value` as java.util.Properties reads it back: backslashes, line breaks, a leading
    space and characters outside ASCII escaped."""
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    if escaped.startswith(" "):
        escaped = "\\" + escaped
    escaped = "".join(c if 32 <= ord(c) < 127 else f"\\u{ord(c):04x}" for c in escaped)
    return f"{key}={escaped}\n"


@contextmanager
def secrets_off_the_command_line(confs: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """The confs to give the builder; the secret ones go to spark-submit in a file of mode
    600 named by PYSPARK_SUBMIT_ARGS for the start, restored afterwards."""
    public, secret = split_secrets(confs)
    if not secret:
        yield public
        return
    original = os.environ.get(SUBMIT_ARGS)
    with tempfile.TemporaryDirectory(prefix="dbt-spark-streams-") as folder:
        path = Path(folder) / "secret.properties"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as properties:
            properties.writelines(properties_line(key, value) for key, value in secret.items())
        os.environ[SUBMIT_ARGS] = f"--properties-file {shlex.quote(str(path))} " + (
            original or "pyspark-shell"
        )
        try:
            yield public
        finally:
            if original is None:
                os.environ.pop(SUBMIT_ARGS, None)
            else:
                os.environ[SUBMIT_ARGS] = original
