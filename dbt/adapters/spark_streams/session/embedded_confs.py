"""The embedded session's settings: where its warehouse, metastore and JVM log live, which
jars it loads, and every conf it starts with. Static confs (extensions, jars, warehouse,
metastore) only take effect when the JVM starts, so they are all decided here, before it does.
"""

import os
import re
import sys
from pathlib import Path

from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.credentials import DEFAULT_JVM_OPTIONS, SparkStreamsCredentials
from dbt.adapters.spark_streams.redaction import jdbc_login
from dbt.adapters.spark_streams.session.jvm.fast_start import FastStart
from dbt.adapters.spark_streams.session.stores.object_store import S3A, packages, s3a_confs

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
DERBY_CLIENT_DRIVER = "org.apache.derby.jdbc.ClientDriver"
# The JDBC driver class of each network metastore database (Hive's default is embedded Derby's).
JDBC_DRIVERS = {
    "jdbc:derby://": DERBY_CLIENT_DRIVER,
    "jdbc:postgresql:": "org.postgresql.Driver",
    "jdbc:mysql:": "com.mysql.cj.jdbc.Driver",
    "jdbc:mariadb:": "org.mariadb.jdbc.Driver",
}
# The module the CDS archive's trainer runs as (session/cds_trainer.py).
CDS_TRAINER = "dbt.adapters.spark_streams.session.cds_trainer"


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


def warehouse_location(creds: SparkStreamsCredentials) -> str:
    """The warehouse as Spark is given it: an object store's URL as written (`s3a://...`),
    a local folder resolved against the project."""
    if (creds.warehouse_dir or "").startswith(S3A):
        return str(creds.warehouse_dir).rstrip("/")
    return str(warehouse_path(creds))


def metastore_path(creds: SparkStreamsCredentials) -> Path:
    """Where the Derby metastore lives: `metastore_dir`, default `<project>/metastore`."""
    return _resolve(creds.metastore_dir, "metastore")


def jvm_log_path(creds: SparkStreamsCredentials) -> Path:
    """Where the JVM's own output goes: `jvm_log`, default `<project>/logs/spark-jvm.log`."""
    return _resolve(creds.jvm_log, "logs/spark-jvm.log")


def fast_start_for(creds: SparkStreamsCredentials) -> FastStart:
    """The JVM start aids (jar cache, CDS archive) of a start with this profile."""
    return FastStart(
        delta_package=packages(creds, spark_home()),
        jars_given=bool(creds.jars_dir),
        server_side_parameters=creds.server_side_parameters,
        spark_home=spark_home(),
        master=creds.master,
        trainer=[sys.executable, "-m", CDS_TRAINER],
    )


def spark_home() -> Path:
    """PySpark's own Spark home, whose jars the JVM loads."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home()).resolve()


def jar_confs(creds: SparkStreamsCredentials, aids: FastStart) -> dict[str, str]:
    """Delta jars from a local folder when one is given, else as the start aids say (the jar
    cache, or resolved from Maven Central and cached after the start)."""
    if not creds.jars_dir:
        return aids.jar_confs()
    folder = _resolve(creds.jars_dir, "")
    jars = sorted(str(jar) for jar in folder.glob("*.jar"))
    if not jars:
        raise FailedToConnectError(
            f"jars_dir {folder} holds no .jar files. Run `make jars` to fetch the Delta jars "
            f"into it, or remove jars_dir to resolve {creds.delta_package} from Maven Central."
        )
    return {"spark.jars": ",".join(jars)}


def session_confs(creds: SparkStreamsCredentials, aids: FastStart | None = None) -> dict[str, str]:
    """Every conf of the embedded session (its jars as `aids` say, by default the profile's
    own aids); the profile's server_side_parameters win."""
    metastore = metastore_path(creds)
    partitions = str(creds.shuffle_partitions)
    aids = aids or fast_start_for(creds)
    confs = {
        "spark.app.name": "dbt-spark-streams",
        "spark.driver.memory": creds.driver_memory,
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": warehouse_location(creds),
        # A table created without USING (a hook's CREATE TABLE ... AS, a seed or snapshot
        # without file_format) is a Delta table, which streams, MERGE and UPDATE need.
        "spark.sql.sources.default": "delta",
        **metastore_confs(creds, metastore),
        "spark.driver.extraJavaOptions": " ".join(
            [f"-Dderby.system.home={metastore}", jvm_options(creds, aids)]
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
        **jar_confs(creds, aids),
        **s3a_confs(creds),
    }
    return {**confs, **creds.server_side_parameters}


def jvm_options(creds: SparkStreamsCredentials, aids: FastStart) -> str:
    """The profile's `jvm_options`; unset, the adapter's default (the old start: none)."""
    if creds.jvm_options is not None:
        return creds.jvm_options
    return DEFAULT_JVM_OPTIONS if aids.enabled else ""


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
    # The login goes in the metastore's own keys, which Spark redacts wherever it prints its
    # confs; a password left in the URL would be printed with it.
    login = jdbc_login(creds.metastore_url)
    confs = {
        "spark.hadoop.javax.jdo.option.ConnectionURL": login.url,
        **resources,
        **pool_confs(creds.metastore_url),
    }
    user, password = creds.metastore_user or login.user, creds.metastore_password or login.password
    if user:
        confs["spark.hadoop.javax.jdo.option.ConnectionUserName"] = user
    if password:
        confs["spark.hadoop.javax.jdo.option.ConnectionPassword"] = password
    driver = next((d for p, d in JDBC_DRIVERS.items() if creds.metastore_url.startswith(p)), None)
    if driver:
        confs["spark.hadoop.javax.jdo.option.ConnectionDriverName"] = driver
    if not creds.metastore_url.startswith("jdbc:derby:"):
        # The metastore's tables are created at the first start (stores/metastore_schema.py),
        # and Hive records its version in them then.
        confs["spark.hadoop.hive.metastore.schema.verification"] = "false"
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


# How long a metastore call waits for a pooled connection before it fails (milliseconds).
POOL_WAIT_MS = 30_000
# Connections per pool (Hive's client opens two pools). Spark calls its Hive client one call at
# a time, so a few suffice; HikariCP's default of ten made each dbt process hold twenty, and
# four processes beside two test sessions filled PostgreSQL's default hundred ("remaining
# connection slots are reserved").
POOL_SIZE = 3


def pool_confs(url: str) -> dict[str, str]:
    """The metastore's connection pool made to survive restarts of the metastore's database.

    Hive 2.3 (Spark's client) pools with DBCP, which hands out connections a restart broke and
    leaks some: under `make chaos`'s metastore restarts, a Connect server's metastore calls
    first reported tables and schemas missing that existed, then, after about twenty restarts,
    waited forever for a connection (DBCP's `borrowObject`). HikariCP (in Spark's jars, and
    the default of later Hive versions) tests a connection before handing it out, drops the
    broken ones and gives up a wait after 30 s; the same restarts (40, under load) left it
    answering every call."""
    test = "VALUES 1" if url.startswith("jdbc:derby:") else "SELECT 1"
    return {
        "spark.hadoop.datanucleus.connectionPoolingType": "HikariCP",
        "spark.hadoop.datanucleus.connectionPool.testSQL": test,
        "spark.hadoop.datanucleus.connectionPool.connectionWaitTimeout": str(POOL_WAIT_MS),
        "spark.hadoop.datanucleus.connectionPool.maxPoolSize": str(POOL_SIZE),
    }


# The default ports of the metastore databases a JDBC URL names without one.
DEFAULT_PORTS = {"derby": 1527, "postgresql": 5432, "mysql": 3306, "mariadb": 3306}
NETWORK_URL = re.compile(
    r"^jdbc:(?P<kind>[a-z0-9]+)://(?:[^/@]*@)?(?P<host>\[[^\]]+\]|[^/:;?]+)(?::(?P<port>\d+))?"
)


def metastore_address(url: str | None) -> tuple[str, int] | None:
    """The host and port of a network metastore's JDBC URL; None for an embedded one (or a URL
    whose address this cannot read: the metastore's own error then speaks)."""
    found = NETWORK_URL.match(url or "")
    if found is None:
        return None
    port = found["port"] or DEFAULT_PORTS.get(found["kind"])
    return (found["host"].strip("[]"), int(port)) if port else None
