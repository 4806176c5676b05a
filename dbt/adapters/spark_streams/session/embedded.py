"""Start the process's one embedded SparkSession, before dbt-spark would.

dbt-spark's session cursor would start the JVM with none of the static confs (extensions, jars,
warehouse, metastore) the adapter needs, and those only take effect when the JVM starts. So the
adapter starts it first, with the confs of embedded_confs.py, and with the JVM start aids (the
jar cache and the class-data-sharing archive, session/jvm/) asked through their one interface.
"""

import os
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError
from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import DEFAULT_DELTA_PACKAGE, SparkStreamsCredentials
from dbt.adapters.spark_streams.redaction import masked, scrubbed
from dbt.adapters.spark_streams.session.embedded_confs import (
    fast_start_for,
    jvm_log_path,
    metastore_address,
    metastore_path,
    session_confs,
)
from dbt.adapters.spark_streams.session.jvm.fast_start import FastStart
from dbt.adapters.spark_streams.session.secret_confs import secrets_off_the_command_line
from dbt.adapters.spark_streams.session.stores.object_store import require_endpoint
from dbt.adapters.spark_streams.session.stores.probe import probe_stores
from dbt.adapters.spark_streams.session.stores.reachable import unanswered
from dbt.adapters.spark_streams.versions import installed_spark, unsupported_spark

logger = AdapterLogger("SparkStreams")

START_LOCK = threading.Lock()
_STARTED: SparkSession | None = None


def _require_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return
    if shutil.which("java"):
        return
    raise FailedToConnectError(
        "Spark needs Java 17, and no `java` is on PATH nor under JAVA_HOME. Install a JDK 17 "
        "(for example `apt-get install openjdk-17-jdk-headless`) and set JAVA_HOME to it."
    )


def _require_metastore(creds: SparkStreamsCredentials) -> None:
    """A network metastore must answer before the JVM starts: Hive's client would otherwise
    wait for it far longer than dbt's `connect_timeout`, and say little when it gives up."""
    address = metastore_address(creds.metastore_url)
    if address is None:
        return
    failed = unanswered(address, creds)
    if failed is None:
        return
    host, port = address
    raise FailedToConnectError(
        f"The metastore at {host}:{port} (metastore_url {masked(creds.metastore_url)}) did not "
        f"answer: {failed} (connect_timeout, connect_retries). Check that its server runs "
        "(for a Derby network server: scripts/metastore-server.sh start <dir>) and that host "
        "and port are right."
    )


def _log_excerpt(log_file: Path, lines: int = 15) -> str:
    if not log_file.exists():
        return ""
    tail = log_file.read_text(errors="replace").splitlines()[-400:]
    telling = [line for line in tail if "unresolved dependency" in line or "Exception" in line]
    return "\n".join((telling or tail)[-lines:])


def _start_failure(
    creds: SparkStreamsCredentials, confs: dict[str, str], aids: FastStart, exc: Exception
) -> FailedToConnectError:
    where = f"the jars in {creds.jars_dir}" if creds.jars_dir else creds.delta_package
    log_file = jvm_log_path(creds)
    cached = ""
    folder = aids.jars_from_cache(confs)
    if folder:
        cached = (
            f" The Delta jars came from the adapter's cache {folder}: delete that folder to "
            f"resolve {creds.delta_package} again."
        )
    said = scrubbed(
        f"{exc}\nLast lines of the JVM log {log_file}:\n{_log_excerpt(log_file)}", creds.secrets()
    )
    return FailedToConnectError(
        f"The embedded Spark session did not start: {said}\n"
        f"If they say 'unresolved dependency', Spark could not fetch {where} from Maven "
        "Central (check the network or a proxy). Fetch the jars once with `make jars` and set "
        "`jars_dir` in the profile to that folder; the session then starts offline. "
        "If they mention java, check that Java 17 is installed and JAVA_HOME points to it."
        f"{cached}"
    )


@contextmanager
def _jvm_output_to(log_file: Path) -> Iterator[None]:
    """The JVM inherits stdout and stderr when it is spawned: point both at a log file then.

    Ivy's resolution report and Spark's warnings would otherwise flood dbt's output.
    """
    log_file.parent.mkdir(parents=True, exist_ok=True)
    saved = [os.dup(1), os.dup(2)]
    sys.stdout.flush()
    sys.stderr.flush()
    with open(log_file, "ab") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            for fd, original in zip((1, 2), saved, strict=True):
                os.dup2(original, fd)
                os.close(original)


def start_embedded_session(creds: SparkStreamsCredentials) -> SparkSession:
    """The process's one SparkSession: an existing one is reused, else one is built.

    The session is kept here: Spark's active session is per thread, and a dbt thread that
    asked Spark for it found none and went through a start again (redirecting the process's
    output while other threads printed).
    """
    global _STARTED
    with START_LOCK:
        if _STARTED is None or _stopped(_STARTED):
            active = SparkSession.getActiveSession()
            _STARTED = active if active is not None else _build_session(creds)
        return _STARTED


def running_session() -> SparkSession | None:
    """The process's embedded session when one runs, else None (none started, or Connect)."""
    session = _STARTED
    return None if session is None or _stopped(session) else session


def _stopped(session: SparkSession) -> bool:
    """A session whose SparkContext was stopped (its Java context is gone)."""
    return session.sparkContext._jsc is None


def _require_supported_spark(creds: SparkStreamsCredentials) -> None:
    """PySpark of a version no Delta release supports, with the default Delta package: a
    sentence now, not a class-loading error in the middle of the first build. A
    `delta_package` of the user's own is tried as given."""
    refusal = unsupported_spark(installed_spark())
    if refusal is not None and creds.delta_package == DEFAULT_DELTA_PACKAGE:
        raise FailedToConnectError(refusal)


def _build_session(creds: SparkStreamsCredentials) -> SparkSession:
    _require_supported_spark(creds)
    _require_java()
    _require_metastore(creds)
    require_endpoint(creds)
    metastore_path(creds).mkdir(parents=True, exist_ok=True)
    aids = fast_start_for(creds)
    with aids.resolving():
        return _start_session(creds, aids)


def _start_session(creds: SparkStreamsCredentials, aids: FastStart) -> SparkSession:
    """Start Spark with the session's confs, as the start aids say (the CDS archive when
    there is one; a start it breaks is made again without it)."""
    confs = session_confs(creds, aids)
    try:
        session = _start(creds, aids.before_start(confs), aids)
    except FailedToConnectError as exc:
        if not aids.without_archive(exc):
            raise
        session = _start(creds, confs, aids)
        aids.started_without_archive()
    session.sparkContext.setLogLevel("ERROR")
    logger.debug(f"Started embedded Spark {session.version} with {aids.describe(confs)}")
    try:
        probe_stores(session, creds)
    except FailedToConnectError:
        session.stop()  # a later connection starts again, and asks again
        raise
    _after_start(aids, confs, session)
    return session


def _start(creds: SparkStreamsCredentials, confs: dict[str, str], aids: FastStart) -> SparkSession:
    builder = SparkSession.builder.master(creds.master)
    try:
        with secrets_off_the_command_line(confs) as public_confs:
            for key, value in public_confs.items():
                builder = builder.config(key, value)
            with _jvm_output_to(jvm_log_path(creds)), _spark_home_set(aids):
                return builder.enableHiveSupport().getOrCreate()
    except PySparkRuntimeError as exc:
        raise _start_failure(creds, confs, aids, exc) from exc


@contextmanager
def _spark_home_set(aids: FastStart) -> Iterator[None]:
    """SPARK_HOME for the launch, so spark-submit need not start a Python to find it.

    It stays set (to PySpark's own home, which PySpark would find anyway): taking it away
    after the start raced with a thread reading it ("'SPARK_HOME'" as a build's error).
    """
    if not os.environ.get("SPARK_HOME") and aids.enabled:
        os.environ["SPARK_HOME"] = str(aids.spark_home)
    yield


def _after_start(aids: FastStart, confs: dict[str, str], session: SparkSession) -> None:
    """Once per machine: the aids cache the jars this start resolved and train an archive
    for the next start. Neither may fail the start: what they say goes to the debug log."""
    resolved = session.sparkContext.getConf().get("spark.jars") or ""
    aids.after_start(confs, resolved)
    for note in aids.notes:
        logger.debug(note)
