"""DESCRIBE DETAIL answered on the driver (session/driver/detail.py) gives exactly Delta's rows.

Each table is asked twice of one embedded session: through `detail_frame` (its file count
and size from the newest version's checksum, no Spark job) and through Spark's DESCRIBE
DETAIL (the computed state, a job), and the rows must be equal, field for field: a table
after writes, an UPDATE and a DELETE with deletion vectors, a partitioned one, one with
column mapping, a comment and properties, an empty one. A clustered table, a version
without a checksum, a view, a path and a missing table are left to Spark.
"""

from collections.abc import Iterator

import pytest
from dbt_common.exceptions import DbtRuntimeError
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.session.cursor import BoundCursor
from dbt.adapters.spark_streams.session.driver.detail import detail_frame

SCHEMA = "detail_reads"
WITHOUT_CHECKSUM = "spark.databricks.delta.writeChecksumFile.enabled"


def run(spark: SparkSession, *statements: str) -> None:
    for statement in statements:
        spark.sql(statement)


@pytest.fixture(scope="module")
def tables(spark: SparkSession) -> Iterator[None]:
    t = f"{SCHEMA}.changed"
    run(
        spark,
        f"create schema if not exists {SCHEMA}",
        f"create or replace table {t} (id int, v string) using delta comment 'orders' "
        "tblproperties (delta.enableChangeDataFeed = true, delta.enableDeletionVectors = true, "
        "team = 'sales')",
        f"insert into {t} values (1, 'a'), (2, 'b'), (3, 'c')",
        f"insert into {t} values (4, 'd')",
        f"update {t} set v = 'z' where id = 2",
        f"delete from {t} where id = 3",
        f"create or replace table {SCHEMA}.parts (id int, day string) using delta "
        "partitioned by (day)",
        f"insert into {SCHEMA}.parts values (1, 'mon'), (2, 'tue'), (3, 'tue')",
        f"create or replace table {SCHEMA}.mapped (id int, `a column` string) using delta "
        "tblproperties (delta.columnMapping.mode = 'name')",
        f"insert into {SCHEMA}.mapped values (1, 'x')",
        f"alter table {SCHEMA}.mapped rename column `a column` to renamed",
        f"create or replace table {SCHEMA}.empty (id int) using delta",
        f"create or replace table {SCHEMA}.clustered (id int) using delta cluster by (id)",
        f"insert into {SCHEMA}.clustered values (1)",
        f"create or replace table {SCHEMA}.unsummed (id int) using delta",
        "create or replace temporary view detail_view as select 1 as id",
    )
    spark.conf.set(WITHOUT_CHECKSUM, "false")
    try:
        spark.sql(f"insert into {SCHEMA}.unsummed values (1)")
    finally:
        spark.conf.unset(WITHOUT_CHECKSUM)
    yield
    run(spark, f"drop schema {SCHEMA} cascade")


@pytest.mark.parametrize(
    "sql",
    [
        f"describe detail {SCHEMA}.changed",
        f"DESCRIBE DETAIL `{SCHEMA}`.`parts`;",
        f'/* {{"app": "dbt"}} */\ndescribe detail spark_catalog.{SCHEMA}.mapped',
        f"describe detail {SCHEMA}.empty",
        f"describe detail {SCHEMA}.unsummed",  # its checksum kept in memory by its commit
    ],
)
def test_rows_are_delta_rows(spark: SparkSession, tables: None, sql: str) -> None:
    read = detail_frame(spark, sql)
    assert read is not None, f"not answered on the driver: {sql}"
    ours = [row.asDict(recursive=True) for row in read.collect()]
    delta = [row.asDict(recursive=True) for row in spark.sql(sql).collect()]
    assert ours == delta
    assert read.schema == spark.sql(sql).schema


def test_counts_are_the_tables_files(spark: SparkSession, tables: None) -> None:
    read = detail_frame(spark, f"describe detail {SCHEMA}.parts")
    assert read is not None
    [row] = read.collect()
    files = spark.sql(f"select count(distinct _metadata.file_path) from {SCHEMA}.parts")
    assert row.numFiles == files.collect()[0][0] == 2 and row.sizeInBytes > 0
    assert row.partitionColumns == ["day"]


@pytest.mark.parametrize(
    "sql",
    [
        f"describe detail {SCHEMA}.clustered",  # clustering columns: Delta's computed state
        "describe detail detail_view",  # a view: Spark's answer
        f"describe detail {SCHEMA}.missing",  # no such table: Spark's error
        f"describe detail delta.`/tmp/{SCHEMA}`",
        f"describe detail {SCHEMA}.changed -- trailing comment",
        f"describe history {SCHEMA}.changed",
    ],
)
def test_other_statements_go_to_spark(spark: SparkSession, tables: None, sql: str) -> None:
    assert detail_frame(spark, sql) is None


def test_a_version_without_a_checksum_goes_to_spark(spark: SparkSession, tables: None) -> None:
    """Read from the log alone (no commit of this session's left its checksum in memory)."""
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # type: ignore[attr-defined]
    assert detail_frame(spark, f"describe detail {SCHEMA}.unsummed") is None
    assert detail_frame(spark, f"describe detail {SCHEMA}.parts") is not None


def test_the_cursor_answers_on_the_driver_and_keeps_sparks_errors(
    spark: SparkSession, tables: None
) -> None:
    cursor = BoundCursor(spark)
    tracker = spark.sparkContext.statusTracker()
    spark.sql(f"insert into {SCHEMA}.changed values (5, 'e')")  # a new snapshot
    jobs = set(tracker.getJobIdsForGroup(None))
    cursor.execute(f"describe detail {SCHEMA}.changed")
    [row] = cursor.fetchall() or []
    assert row.name == f"spark_catalog.{SCHEMA}.changed" and row.properties["team"] == "sales"
    assert set(tracker.getJobIdsForGroup(None)) == jobs  # no Spark job
    with pytest.raises(DbtRuntimeError, match="TABLE_OR_VIEW_NOT_FOUND"):
        cursor.execute(f"describe detail {SCHEMA}.missing")
