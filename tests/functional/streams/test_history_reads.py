"""DESCRIBE HISTORY read on the driver (session/driver/history.py) gives exactly Delta's rows.

Each case is asked twice of one embedded session: through `history_frame` and through
Spark's DESCRIBE HISTORY, and the rows must be equal, field for field. A table takes every
kind of commit a stream build meets (writes, MERGE with user metadata, DELETE, UPDATE,
schema and property changes, OPTIMIZE, RESTORE, a replace), and one commit file's
modification time is set back so Delta must make the timestamps monotonic. Statements the
driver read does not answer come back as None, and the cursor lets Spark raise its own error.
"""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbt_common.exceptions import DbtRuntimeError
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.session.cursor import BoundCursor
from dbt.adapters.spark_streams.session.driver import history as delta_history
from dbt.adapters.spark_streams.session.driver.history import history_frame
from dbt.adapters.spark_streams.session.driver.tables import delta_table, name_parts, scala_none

SCHEMA = "history_reads"
TABLE = f"{SCHEMA}.commits"


def run(spark: SparkSession, *statements: str) -> None:
    for statement in statements:
        spark.sql(statement)


@pytest.fixture(scope="module")
def table(spark: SparkSession) -> Iterator[str]:
    run(
        spark,
        f"create schema if not exists {SCHEMA}",
        f"drop table if exists {TABLE}",
        f"create table {TABLE} (id int, v string) using delta "
        "tblproperties (delta.enableChangeDataFeed = true)",
        f"insert into {TABLE} values (1, 'a'), (2, 'b')",
    )
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", '{"offsets": [1]}')
    try:
        spark.sql(
            f"merge into {TABLE} t using (select 2 id, 'c' v union all select 3, 'd') s "
            "on t.id = s.id when matched then update set * when not matched then insert *"
        )
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    run(
        spark,
        f"delete from {TABLE} where id = 1",
        f"update {TABLE} set v = 'z' where id = 3",
        f"alter table {TABLE} add columns (w int)",
        f"alter table {TABLE} set tblproperties (delta.logRetentionDuration = 'interval 30 days')",
        f"optimize {TABLE}",
        f"restore table {TABLE} to version as of 2",
        f"create or replace table {TABLE} using delta as select * from {TABLE}",
        f"insert into {TABLE} select * from {TABLE}",
    )
    _set_back_commit_time(spark, TABLE, version=4)
    yield TABLE
    spark.sql(f"drop table if exists {TABLE}")


def _set_back_commit_time(spark: SparkSession, table: str, version: int) -> None:
    """Give a commit file an older modification time than its predecessor's."""
    [detail] = spark.sql(f"describe detail {table}").collect()
    log = Path(detail.location.removeprefix("file:")) / "_delta_log"
    earlier = (log / f"{version - 1:020d}.json").stat().st_mtime - 60
    os.utime(log / f"{version:020d}.json", (earlier, earlier))


def both(spark: SparkSession, sql: str) -> tuple[list[dict], list[dict]]:
    read = history_frame(spark, sql)
    assert read is not None, f"not read on the driver: {sql}"
    ours = [row.asDict(recursive=True) for row in read.collect()]
    return ours, [row.asDict(recursive=True) for row in spark.sql(sql).collect()]


@pytest.mark.parametrize(
    ("sql", "count"),
    [
        ("describe history {t}", 10),
        ("DESCRIBE HISTORY {t} LIMIT 1", 1),
        ("describe history {t} limit 4", 4),
        ("describe history {t} limit 50", 10),
        ('/* {{"app": "dbt"}} */\ndescribe history `{schema}`.`commits` limit 3', 3),
        ("describe history spark_catalog.{t};", 10),
        ('describe history {t} limit 2\n/* {{"app": "dbt"}} */', 2),
    ],
)
def test_rows_are_delta_rows(spark: SparkSession, table: str, sql: str, count: int) -> None:
    ours, delta = both(spark, sql.format(t=table, schema=SCHEMA))
    assert ours == delta
    assert len(ours) == count


def test_monotonic_timestamps_and_metadata_kept(spark: SparkSession, table: str) -> None:
    ours, delta = both(spark, f"describe history {table}")
    assert ours == delta
    by_version = {row["version"]: row for row in ours}
    assert by_version[4]["timestamp"] > by_version[3]["timestamp"]  # set back, then monotonized
    assert by_version[2]["userMetadata"] == '{"offsets": [1]}'
    assert by_version[2]["operationMetrics"]["numTargetRowsInserted"] == "1"


def test_commit_times_come_from_the_snapshots_listing(spark: SparkSession, table: str) -> None:
    """The times of the commits after the snapshot's checkpoint (the newest ones) are those of
    the listing that found them (no status asked per version, a HEAD each on an object store);
    they are the files' own times."""
    jvm, jsession = spark._jvm, spark._jsparkSession  # type: ignore[attr-defined]
    entry = delta_table(jvm, jsession, name_parts(table))
    log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(jsession, entry)
    snapshot = log.update(False, scala_none(jvm), scala_none(jvm))
    folder = Path(str(log.logPath().toUri().getPath()))
    on_disk = {int(f.name[:20]): f.stat().st_mtime_ns // 1_000_000 for f in folder.glob("*.json")}
    newest = max(on_disk)
    listed = delta_history.listed_commit_times(jvm, snapshot, 0)
    assert listed and sorted(listed) == list(range(newest - len(listed) + 1, newest + 1))
    assert listed == {version: on_disk[version] for version in listed}
    # from a start version on: that version and the newer ones only
    assert delta_history.listed_commit_times(jvm, snapshot, newest - 1) == {
        version: on_disk[version] for version in (newest - 1, newest)
    }


def test_a_long_range_goes_to_sparks_parallel_read(
    spark: SparkSession, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delta_history, "MOST_VERSIONS", 3)
    assert history_frame(spark, f"describe history {table}") is None
    assert history_frame(spark, f"describe history {table} limit 4") is None
    ours, delta = both(spark, f"describe history {table} limit 3")
    assert ours == delta and len(ours) == 3


@pytest.fixture(scope="module")
def others(spark: SparkSession) -> Iterator[None]:
    run(
        spark,
        f"create schema if not exists {SCHEMA}",
        f"drop table if exists {SCHEMA}.plain",
        f"create table {SCHEMA}.plain (id int) using parquet",
        f"drop table if exists {SCHEMA}.ict",
        f"create table {SCHEMA}.ict (id int) using delta "
        "tblproperties (delta.enableInCommitTimestamps = true)",
        f"insert into {SCHEMA}.ict values (1)",
        "create or replace temporary view commits_view as select 1 as id",
    )
    yield
    run(spark, f"drop table {SCHEMA}.plain", f"drop table {SCHEMA}.ict")


@pytest.mark.parametrize(
    "sql",
    [
        f"describe history {SCHEMA}.plain",  # not Delta: Spark's error
        f"describe history {SCHEMA}.missing",  # no such table: Spark's error
        "describe history commits_view",  # a view: Spark's error
        f"describe history {SCHEMA}.ict",  # in-commit timestamps: Delta's own reading
        f"describe history {TABLE} limit 0",
        f"describe history delta.`/tmp/{SCHEMA}`",
        f"describe history other_catalog.{TABLE}",
        f"describe history {TABLE} -- trailing comment",
        f"select * from {TABLE}",
    ],
)
def test_other_statements_go_to_spark(
    spark: SparkSession, table: str, others: None, sql: str
) -> None:
    assert history_frame(spark, sql) is None


def test_cursor_keeps_sparks_errors(spark: SparkSession, others: None) -> None:
    cursor = BoundCursor(spark)
    with pytest.raises(DbtRuntimeError, match="TABLE_OR_VIEW_NOT_FOUND"):
        cursor.execute(f"describe history {SCHEMA}.missing")
    with pytest.raises(DbtRuntimeError, match="DELTA_ONLY_OPERATION"):
        cursor.execute(f"describe history {SCHEMA}.plain")
    cursor.execute(f"describe history {SCHEMA}.ict limit 1")
    [row] = cursor.fetchall() or []
    assert row.version == 1 and row.operation == "WRITE"
