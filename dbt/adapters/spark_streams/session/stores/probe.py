"""Once the embedded JVM runs, the stores the profile names are asked once, each within the
profile's bound (connect_timeout x (connect_retries + 1)): the object store behind an `s3a://`
warehouse (does it take the keys, does the bucket exist) and a PostgreSQL or MySQL metastore
(does it take the login). A wrong one is one sentence naming the setting to fix, before any
model runs; left to the first statement, S3A's retries and Hive's would take minutes and end
in a stack.
"""

import threading
from collections.abc import Callable
from typing import Any, cast

from dbt.adapters.exceptions import FailedToConnectError
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.redaction import jdbc_login, scrubbed
from dbt.adapters.spark_streams.session.embedded_confs import spark_home
from dbt.adapters.spark_streams.session.errors import NO_CONNECTION_ADVICE
from dbt.adapters.spark_streams.session.stores.metastore_schema import create_schema, has_schema
from dbt.adapters.spark_streams.session.stores.object_store import ENDPOINT, S3A

# How long setting S3A up in the JVM may take (loading its classes and the SDK's client).
SETUP_S = 120.0
SETUP_TOO_LONG = (
    f"Setting up S3A (hadoop-aws and its SDK; no request to the store yet) took more than "
    f"{SETUP_S:.0f} s. The machine may be overloaded; nothing was read or written."
)
NETWORK_DATABASES = ("jdbc:postgresql:", "jdbc:mysql:", "jdbc:mariadb:")
DRIVER_CONF = "spark.hadoop.javax.jdo.option.ConnectionDriverName"
HADOOP_CONF = "spark.hadoop."

# What a refusal of the object store or of the metastore's database means, by the Java
# exception's class (S3A's translation of the HTTP status) or SQL state.
STORE_REFUSALS = {
    "java.nio.file.AccessDeniedException": (
        "refused the keys ({why}): check spark.hadoop.fs.s3a.access.key and "
        "spark.hadoop.fs.s3a.secret.key in server_side_parameters"
    ),
    "org.apache.hadoop.fs.s3a.UnknownStoreException": (
        "has no bucket {bucket} ({why}): create it, or correct warehouse_dir"
    ),
}
NO_DRIVER = (
    "cannot be reached: the JVM has no JDBC driver for it. Set metastore_driver_jar to the "
    "driver's jar (PostgreSQL's: org.postgresql:postgresql from Maven Central)"
)
LOGIN_REFUSALS = {
    "28P01": "refused the login of {user} (wrong password): check metastore_password",
    "28000": "refused the login of {user}: check metastore_user and the server's access rules",
    "3D000": "has no such database: create it, or correct the database in metastore_url",
    "53300": "has no connection left for {user} ({why}): " + NO_CONNECTION_ADVICE,
}


def probe_stores(session: SparkSession, creds: SparkStreamsCredentials) -> None:
    """Ask the warehouse's object store and a network metastore once; a refusal or silence
    is a FailedToConnectError naming the setting to fix."""
    bound = creds.connect_timeout * (1 + max(0, creds.connect_retries))
    warehouse = creds.warehouse_dir or ""
    if warehouse.startswith(S3A):
        _warehouse_answers(session, creds, bound)
    url = creds.metastore_url or ""
    if url.startswith(NETWORK_DATABASES):
        silence = _silent("The metastore's database", bound)
        _within(bound, lambda: _login_accepted(session, creds), silence)
        _with_schema(session, creds)


def _login(session: SparkSession, creds: SparkStreamsCredentials) -> tuple[Any, str, str, Any]:
    """The JVM, the JDBC URL without its login, the user and the login as JDBC properties."""
    jvm: Any = session._jvm
    login = jdbc_login(creds.metastore_url or "")
    user = creds.metastore_user or login.user or ""
    properties = jvm.java.util.Properties()
    properties.setProperty("user", user)
    properties.setProperty("password", creds.metastore_password or login.password or "")
    return jvm, login.url, user, properties


def _with_schema(session: SparkSession, creds: SparkStreamsCredentials) -> None:
    """The metastore's tables, created at the first start against an empty database."""
    jvm, url, user, properties = _login(session, creds)
    if has_schema(jvm, url, properties):
        return
    driver = session.sparkContext.getConf().get(DRIVER_CONF) or ""
    login = {"url": url, "driver": driver, "user": user}
    login["password"] = str(properties.getProperty("password"))
    try:
        create_schema(spark_home(), creds.metastore_driver_jar or "", login, creds.secrets())
    except FailedToConnectError:
        if not has_schema(jvm, url, properties):  # else another process made it meanwhile
            raise


def _within(seconds: float, ask: Callable[[], Any], silence: str) -> Any:
    """What `ask` returns, or a FailedToConnectError saying `silence` once `seconds` passed
    without it."""
    failed: list[BaseException] = []
    answers: list[Any] = []

    def run() -> None:
        try:
            answers.append(ask())
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    asking = threading.Thread(target=run, name="dbt-spark-streams-probe", daemon=True)
    asking.start()
    asking.join(seconds)
    if asking.is_alive():
        raise FailedToConnectError(silence)
    if failed:
        raise failed[0]
    return answers[0] if answers else None


def _silent(store: str, seconds: float) -> str:
    return (
        f"{store} did not answer within {seconds} s (connect_timeout x (connect_retries + 1)). "
        "Check that it runs and that the endpoint is right."
    )


def _warehouse_answers(
    session: SparkSession, creds: SparkStreamsCredentials, bound: float
) -> None:
    """The warehouse's bucket asked once within `bound`. Setting S3A up (its classes, the
    SDK's client) asks nothing of the store and may take longer on a busy machine: it gets
    SETUP_S of its own, so that the bound measures the store's answer only."""
    warehouse, jvm = str(creds.warehouse_dir), cast(Any, session._jvm)
    path = jvm.org.apache.hadoop.fs.Path(warehouse)
    # A file system of its own, from the profile's settings (the session's cached one may have
    # been made before them, by a caller probing other settings)
    conf = jvm.org.apache.hadoop.conf.Configuration(session._jsc.hadoopConfiguration())
    for key, value in creds.server_side_parameters.items():
        if key.startswith(HADOOP_CONF):
            conf.set(key.removeprefix(HADOOP_CONF), str(value))
    filesystems = jvm.org.apache.hadoop.fs.FileSystem
    try:
        filesystem = _within(
            SETUP_S, lambda: filesystems.newInstance(path.toUri(), conf), SETUP_TOO_LONG
        )
        try:
            endpoint = creds.server_side_parameters.get(ENDPOINT, "AWS")
            store = f"The object store of {warehouse} ({endpoint})"
            _within(bound, lambda: filesystem.exists(path), _silent(store, bound))
        finally:
            filesystem.close()
    except Py4JJavaError as exc:
        kind, why = _java_error(exc)
        refusal = STORE_REFUSALS.get(kind, "failed ({why})")
        bucket = warehouse.removeprefix(S3A).split("/")[0]
        said = scrubbed(refusal.format(why=why, bucket=bucket), creds.secrets())
        raise FailedToConnectError(
            f"The object store of warehouse_dir {warehouse} {said}. Nothing was read or written."
        ) from None


def _login_accepted(session: SparkSession, creds: SparkStreamsCredentials) -> None:
    jvm, url, user, properties = _login(session, creds)
    jvm.java.sql.DriverManager.setLoginTimeout(max(1, int(creds.connect_timeout)))
    try:
        jvm.java.sql.DriverManager.getConnection(url, properties).close()
    except Py4JJavaError as exc:
        state = str(exc.java_exception.getSQLState() or "") if _is_sql(exc) else ""
        _, why = _java_error(exc)
        refusal = LOGIN_REFUSALS.get(state, "refused the connection ({why})")
        if "No suitable driver" in why:
            refusal = NO_DRIVER
        said = scrubbed(refusal.format(user=user, why=why), creds.secrets())
        raise FailedToConnectError(
            f"The metastore's database ({url}) {said}. Nothing was read or written."
        ) from None


def _is_sql(exc: Py4JJavaError) -> bool:
    return "SQLException" in _class_names(exc.java_exception)


def _class_names(java: Any) -> str:
    names, kind = [], java.getClass()
    while kind is not None:
        names.append(kind.getName())
        kind = kind.getSuperclass()
    return " ".join(names)


def _java_error(exc: Py4JJavaError) -> tuple[str, str]:
    """The Java exception's class and the first line of its message."""
    java = exc.java_exception
    message = str(java.getMessage() or java.toString())
    return java.getClass().getName(), message.strip().splitlines()[0][:300]
