"""A fake JDK and Spark home for the JVM's tests, and the confs they start with."""

from pathlib import Path

import pytest

from dbt.adapters.spark_streams.session import embedded_confs
from dbt.adapters.spark_streams.session.jvm import cds, jar_cache

RELEASE = 'IMPLEMENTOR="Debian"\nJAVA_VERSION="17.0.15"\n'
TRAINER = ["/usr/bin/python3", "-m", embedded_confs.CDS_TRAINER]


CONFS = {
    "spark.jars": "/cache/jars/a.jar,/cache/jars/b.jar",
    "spark.driver.extraJavaOptions": "-Dderby.system.home=/p/metastore",
    "spark.sql.warehouse.dir": "/p/spark-warehouse",
    "spark.hadoop.javax.jdo.option.ConnectionURL": "jdbc:derby://localhost:1527/ms",
    "spark.hadoop.javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.ClientDriver",
    "spark.driver.extraClassPath": "/jars/derbyclient.jar",
}


def fake_jdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake JDK and Spark home, and an empty cache: every file the key reads, none real."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "lib" / "server").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\nexit 0\n")
    (home / "bin" / "java").chmod(0o755)
    (home / "lib" / "server" / "libjvm.so").write_bytes(b"jvm")
    (home / "release").write_text(RELEASE)
    spark = tmp_path / "spark"
    (spark / "jars").mkdir(parents=True)
    (spark / "jars" / "spark-core_2.13-4.2.0.jar").write_bytes(b"core")
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setattr(embedded_confs, "spark_home", lambda: spark)
    monkeypatch.setenv(jar_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    for name in (cds.CDS_ENV, jar_cache.FAST_START_ENV, *cds.LAUNCHER_ENV):
        monkeypatch.delenv(name, raising=False)
    return home
