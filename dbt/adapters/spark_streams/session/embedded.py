"""Build the local SparkSession before dbt-spark would.

Static confs (extensions, jars, warehouse, metastore) only take effect when the JVM starts, and
dbt-spark's session cursor starts it with none of them. So the adapter starts it first, with
Delta Lake wired in, a persistent Hive metastore and warehouse, and sizes fit for one machine.
"""

import os
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError
from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import DEFAULT_JVM_OPTIONS, SparkStreamsCredentials
from dbt.adapters.spark_streams.session.jvm import cds, jar_cache

logger = AdapterLogger("SparkStreams")

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
START_LOCK = threading.Lock()
_STARTED: SparkSession | None = None
DERBY_CLIENT_DRIVER = "org.apache.derby.jdbc.ClientDriver"


def project_dir() -> Path:
    """The dbt project directory, where relative profile paths are anchored."""
    try:
        from dbt.flags import get_flags

        flagged = getattr(get_flags(), "PROJECT_DIR", None)
    except ImportError:
        flagged = None
    return Path(flagged or os.getcwd()).resolve()


def _resolve(path: str | None, default: str) -> Path:
    chosen = Path(os.path.expanduser(path or default))
    return chosen if chosen.is_absolute() else (project_dir() / chosen).resolve()


def warehouse_path(creds: SparkStreamsCredentials) -> Path:
    """Where managed tables live: `warehouse_dir`, default `<project>/spark-warehouse`."""
    return _resolve(creds.warehouse_dir, "spark-warehouse")


def metastore_path(creds: SparkStreamsCredentials) -> Path:
    """Where the Derby metastore lives: `metastore_dir`, default `<project>/metastore`."""
    return _resolve(creds.metastore_dir, "metastore")


def jvm_log_path(creds: SparkStreamsCredentials) -> Path:
    """Where the JVM's own output goes: `jvm_log`, default `<project>/logs/spark-jvm.log`."""
    return _resolve(creds.jvm_log, "logs/spark-jvm.log")


def jar_confs(creds: SparkStreamsCredentials) -> dict[str, str]:
    """Delta jars from a local folder when one is given, else from the adapter's jar cache
    (see session/jvm/jar_cache.py), else resolved from Maven Central (and cached after the
    start)."""
    if not creds.jars_dir:
        if jar_cache.applies(creds.server_side_parameters):
            cached = jar_cache.cached_jars(creds.delta_package)
            if cached:
                return {"spark.jars": ",".join(str(jar) for jar in cached)}
        return {"spark.jars.packages": creds.delta_package}
    folder = _resolve(creds.jars_dir, "")
    jars = sorted(str(jar) for jar in folder.glob("*.jar"))
    if not jars:
        raise FailedToConnectError(
            f"jars_dir {folder} holds no .jar files. Run `make jars` to fetch the Delta jars "
            f"into it, or remove jars_dir to resolve {creds.delta_package} from Maven Central."
        )
    return {"spark.jars": ",".join(jars)}


def session_confs(creds: SparkStreamsCredentials) -> dict[str, str]:
    """Every conf of the embedded session; the profile's server_side_parameters win."""
    metastore = metastore_path(creds)
    partitions = str(creds.shuffle_partitions)
    confs = {
        "spark.app.name": "dbt-spark-streams",
        "spark.driver.memory": creds.driver_memory,
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(warehouse_path(creds)),
        # A table created without USING (a hook's CREATE TABLE ... AS, a seed or snapshot
        # without file_format) is a Delta table, which streams, MERGE and UPDATE need.
        "spark.sql.sources.default": "delta",
        **metastore_confs(creds, metastore),
        "spark.driver.extraJavaOptions": " ".join(
            [f"-Dderby.system.home={metastore}", jvm_options(creds)]
        ).strip(),
        "spark.sql.shuffle.partitions": partitions,
        "spark.default.parallelism": partitions,
        "spark.databricks.delta.snapshotPartitions": partitions,
        # File listings (VACUUM's above all) run this many tasks: Spark's default of 10,000
        # suits a cluster, and made a VACUUM of a two-file table take 70 s on one machine.
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": partitions,
        "spark.databricks.delta.properties.defaults.enableChangeDataFeed": str(
            creds.change_data_feed
        ).lower(),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        **jar_confs(creds),
    }
    return {**confs, **creds.server_side_parameters}


def jvm_options(creds: SparkStreamsCredentials) -> str:
    """The profile's `jvm_options`; unset, the adapter's default (the old start: none)."""
    if creds.jvm_options is not None:
        return creds.jvm_options
    return DEFAULT_JVM_OPTIONS if jar_cache.fast_start_enabled() else ""


def metastore_confs(creds: SparkStreamsCredentials, metastore: Path) -> dict[str, str]:
    """The Hive metastore's database: embedded Derby in metastore_dir, or a shared server.

    Embedded Derby admits one process at a time; `metastore_url` points every process of a
    team (or of the concurrency tests) at one Derby network server instead.
    """
    # Hive's session creates this folder at start and removes it only when closed, which Spark
    # never does: by default a new /tmp/<uuid>_resources per process, hundreds after a test run.
    resources = {"spark.hadoop.hive.downloaded.resources.dir": str(metastore / "hive_resources")}
    if not creds.metastore_url:
        url = f"jdbc:derby:;databaseName={metastore / 'metastore_db'};create=true"
        return {"spark.hadoop.javax.jdo.option.ConnectionURL": url, **resources}
    confs = {"spark.hadoop.javax.jdo.option.ConnectionURL": creds.metastore_url, **resources}
    if creds.metastore_url.startswith("jdbc:derby://"):
        confs["spark.hadoop.javax.jdo.option.ConnectionDriverName"] = DERBY_CLIENT_DRIVER
    if creds.metastore_driver_jar:
        # The metastore loads its JDBC driver from the JVM's own class path, not from jars
        # added later (spark.jars, spark.jars.packages).
        jar = _resolve(creds.metastore_driver_jar, "")
        if not jar.is_file():
            raise FailedToConnectError(
                f"metastore_driver_jar {jar} does not exist. For a Derby network server, "
                "`scripts/metastore-server.sh start <dir>` fetches it into .jars/derby-server/."
            )
        confs["spark.driver.extraClassPath"] = str(jar)
    return confs


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


def _log_excerpt(log_file: Path, lines: int = 15) -> str:
    if not log_file.exists():
        return ""
    tail = log_file.read_text(errors="replace").splitlines()[-400:]
    telling = [line for line in tail if "unresolved dependency" in line or "Exception" in line]
    return "\n".join((telling or tail)[-lines:])


def _start_failure(
    creds: SparkStreamsCredentials, confs: dict[str, str], exc: Exception
) -> FailedToConnectError:
    where = f"the jars in {creds.jars_dir}" if creds.jars_dir else creds.delta_package
    log_file = jvm_log_path(creds)
    cached = ""
    if _jars_from_cache(creds, confs):
        cached = (
            f" The Delta jars came from the adapter's cache "
            f"{jar_cache.entry_dir(creds.delta_package)}: delete that folder to resolve "
            f"{creds.delta_package} again."
        )
    return FailedToConnectError(
        f"The embedded Spark session did not start: {exc}\n"
        f"Last lines of the JVM log {log_file}:\n{_log_excerpt(log_file)}\n"
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


def _stopped(session: SparkSession) -> bool:
    """A session whose SparkContext was stopped (its Java context is gone)."""
    return session.sparkContext._jsc is None


def _build_session(creds: SparkStreamsCredentials) -> SparkSession:
    _require_java()
    metastore_path(creds).mkdir(parents=True, exist_ok=True)
    with _one_resolution_at_a_time(creds):
        return _start_session(creds)


def _start_session(creds: SparkStreamsCredentials) -> SparkSession:
    """Start Spark with the session's confs (and the CDS archive, when there is one)."""
    confs = session_confs(creds)
    archive = _cds_archive(confs)
    options = cds.start_options(archive) if archive else []
    try:
        session = _start(creds, cds.with_java_options(confs, options))
    except FailedToConnectError as exc:
        if not (archive and options):
            raise
        # The archive must never cost a start: start again without it, and drop it if that
        # start succeeds (it was the archive).
        logger.debug(f"Spark did not start with the CDS archive {archive.path}: {exc}")
        session = _start(creds, confs)
        cds.forget(archive, f"a start with it failed and one without it succeeded: {exc}")
        options = []
    session.sparkContext.setLogLevel("ERROR")
    jars = "jars_dir" if creds.jars_dir else "spark.jars.packages"
    if _jars_from_cache(creds, confs):
        jars = f"the jar cache {jar_cache.entry_dir(creds.delta_package)}"
    logger.debug(
        f"Started embedded Spark {session.version} with {creds.delta_package} from {jars}"
        + (f", CDS archive {archive.path}" if archive and options else ", no CDS archive")
    )
    _after_start(creds, confs, session, archive)
    return session


def _one_resolution_at_a_time(creds: SparkStreamsCredentials) -> AbstractContextManager[None]:
    """The jar cache's lock when this start may have to resolve the Delta jars (nothing cached
    yet): processes starting at once then resolve one after another, the later ones from the
    cache (session/jvm/jar_cache.py). A start with jars_dir or a filled cache takes no lock."""
    if creds.jars_dir or not jar_cache.applies(creds.server_side_parameters):
        return nullcontext()
    if jar_cache.cached_jars(creds.delta_package):
        return nullcontext()
    return jar_cache.resolution_lock(creds.delta_package)


def _jars_from_cache(creds: SparkStreamsCredentials, confs: dict[str, str]) -> bool:
    """Whether this start's Delta jars are the jar cache's (no jars_dir, nothing to resolve)."""
    return not creds.jars_dir and "spark.jars.packages" not in confs


def _start(creds: SparkStreamsCredentials, confs: dict[str, str]) -> SparkSession:
    builder = SparkSession.builder.master(creds.master)
    for key, value in confs.items():
        builder = builder.config(key, value)
    try:
        with _jvm_output_to(jvm_log_path(creds)), _spark_home_set():
            return builder.enableHiveSupport().getOrCreate()
    except PySparkRuntimeError as exc:
        raise _start_failure(creds, confs, exc) from exc


@contextmanager
def _spark_home_set() -> Iterator[None]:
    """SPARK_HOME for the launch, so spark-submit need not start a Python to find it.

    It stays set (to PySpark's own home, which PySpark would find anyway): taking it away
    after the start raced with a thread reading it ("'SPARK_HOME'" as a build's error).
    """
    if not os.environ.get("SPARK_HOME") and jar_cache.fast_start_enabled():
        os.environ["SPARK_HOME"] = str(cds.spark_home())
    yield


def _cds_archive(confs: dict[str, str]) -> cds.Archive | None:
    if not cds.enabled():
        return None
    try:
        return cds.archive_for(confs)
    except Exception as exc:
        logger.debug(f"No CDS archive for this start: {exc}")
        return None


def _after_start(
    creds: SparkStreamsCredentials,
    confs: dict[str, str],
    session: SparkSession,
    archive: cds.Archive | None,
) -> None:
    """Once per machine: cache the jars this start resolved, train the CDS archive.

    Neither may fail the start: problems are logged at debug and the next start tries again.
    The archive is trained for the next start: this start's slot (`archive`), unless this
    start resolved the jars.
    """
    resolved_now = "spark.jars.packages" in confs
    if resolved_now and jar_cache.applies(creds.server_side_parameters):
        try:
            resolved = session.sparkContext.getConf().get("spark.jars") or ""
            stored = jar_cache.store(creds.delta_package, jar_cache.resolved_jar_files(resolved))
            logger.debug(f"Cached the {len(stored)} jars of {creds.delta_package}")
        except Exception as exc:
            logger.debug(f"Could not cache the jars of {creds.delta_package}: {exc}")
    if not cds.enabled():
        return
    try:
        if resolved_now:  # the next start uses the jar cache: another class path, slot
            confs = session_confs(creds)
            archive = cds.archive_for(confs)
        if archive and cds.train_in_background(archive, confs, creds.master):
            logger.debug(f"Training the CDS archive {archive.path} in the background")
    except Exception as exc:
        logger.debug(f"Could not start training a CDS archive: {exc}")
