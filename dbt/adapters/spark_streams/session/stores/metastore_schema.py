"""A new PostgreSQL or MySQL metastore gets Hive's tables at its first start, all at once, from
DataNucleus's SchemaTool over the metadata Hive's metastore jar carries (`package.jdo`): what
Hive's own schema scripts create, made by the library Hive's client persists with.

Left to Hive's `datanucleus.schema.autoCreateAll`, DataNucleus creates each table the first time
a statement needs it, from a second connection, while the statement's transaction holds locks
on the tables it references: on PostgreSQL the first CREATE TABLE of a Delta table waited
forever for itself (`ALTER TABLE "TBL_PRIVS" ADD CONSTRAINT ... REFERENCES "TBLS"` behind the
transaction's own insert into TBLS).
"""

import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.redaction import scrubbed
from dbt.adapters.spark_streams.session.secret_confs import properties_line

SCHEMA_TOOL = "org.datanucleus.store.schema.SchemaTool"
SCHEMA_TOOL_SECONDS = 300
# Hive's own DataNucleus settings (HiveConf's defaults), which the tables' names depend on.
JDO_FACTORY = "org.datanucleus.api.jdo.JDOPersistenceManagerFactory"
HIVE_DATANUCLEUS = {
    "javax.jdo.PersistenceManagerFactoryClass": JDO_FACTORY,
    "datanucleus.identifierFactory": "datanucleus1",
    "datanucleus.rdbms.useLegacyNativeValueStrategy": "true",
}


def has_schema(jvm: Any, url: str, properties: Any) -> bool:
    """Whether the database holds the metastore's tables (its DBS table)."""
    connection = jvm.java.sql.DriverManager.getConnection(url, properties)
    try:
        found = connection.getMetaData().getTables(None, None, "DBS", None)
        return bool(found.next())
    finally:
        connection.close()


def create_schema(
    spark_home: Path, driver_jar: str, login: dict[str, str], secrets: list[str]
) -> None:
    """Create the metastore's tables with SchemaTool in a JVM of its own; `login` holds the
    JDBC URL, driver class, user and password (written to a file only its owner reads)."""
    jars = spark_home / "jars"
    metastore_jar = next(iter(sorted(jars.glob("hive-metastore-*.jar"))), None)
    if metastore_jar is None:
        raise FailedToConnectError(f"No hive-metastore jar in {jars}: reinstall pyspark.")
    with tempfile.TemporaryDirectory(prefix="dbt-spark-streams-schema-") as folder:
        metadata = Path(folder) / "package.jdo"
        with zipfile.ZipFile(metastore_jar) as jar:
            metadata.write_bytes(jar.read("package.jdo"))
        settings = {
            **HIVE_DATANUCLEUS,
            "javax.jdo.option.ConnectionURL": login["url"],
            "javax.jdo.option.ConnectionDriverName": login["driver"],
            "javax.jdo.option.ConnectionUserName": login["user"],
            "javax.jdo.option.ConnectionPassword": login["password"],
        }
        props = Path(folder) / "schema.properties"
        descriptor = os.open(props, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as out:
            out.writelines(properties_line(key, value) for key, value in settings.items())
        command = [
            _java(), "-cp", f"{jars}/*{os.pathsep}{driver_jar}", SCHEMA_TOOL,
            "-create", "-api", "JDO", "-props", str(props), str(metadata),
        ]  # fmt: skip
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=SCHEMA_TOOL_SECONDS, check=False
        )
    if done.returncode != 0 or "completed successfully" not in done.stdout:
        said = scrubbed((done.stdout + done.stderr)[-2000:], secrets)
        raise FailedToConnectError(
            f"Creating the metastore's tables in {login['url']} failed:\n{said}\nCheck that "
            f"metastore_user may create tables in that database. Nothing else was written."
        )


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java") or "java"
