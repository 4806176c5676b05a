"""A commit's checksum file in a session whose time zone is not UTC: written, without the
table's file list.

Delta 4.4 copies a small table's file list into each commit's checksum file and, where the
session's or the JVM's time zone is not UTC, checks the copy after every commit by rebuilding
the table's state (0.5 s an INSERT, 0.9 s a MERGE measured in Berlin and Tokyo). The embedded
session turns the copy off (credentials.ALL_FILES_IN_CRC); the checksum's counts stay.
"""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.credentials import ALL_FILES_IN_CRC

TABLE = "commit_checksum.orders"
ZONE = "spark.sql.session.timeZone"


@pytest.fixture
def tokyo(spark: SparkSession) -> Iterator[SparkSession]:
    before = spark.conf.get(ZONE)
    spark.conf.set(ZONE, "Asia/Tokyo")
    try:
        yield spark
    finally:
        spark.conf.set(ZONE, before)


def test_checksums_carry_counts_and_no_file_list_outside_utc(tokyo: SparkSession) -> None:
    assert tokyo.conf.get(ALL_FILES_IN_CRC) == "false"
    for statement in (
        "create schema if not exists commit_checksum",
        f"drop table if exists {TABLE}",
        f"create table {TABLE} (id bigint, placed timestamp) using delta",
        f"insert into {TABLE} values (1, timestamp'1850-01-01 00:00:00')",
        f"insert into {TABLE} values (2, timestamp'2026-12-02 09:00:00')",
        f"merge into {TABLE} t using (select 2L id, timestamp'1999-01-01 00:00:00' placed) s "
        "on t.id = s.id when matched then update set *",
    ):
        tokyo.sql(statement)
    [detail] = tokyo.sql(f"describe detail {TABLE}").collect()
    log = Path(detail.location.removeprefix("file:")) / "_delta_log"
    checksum = json.loads((log / "00000000000000000003.crc").read_text())
    assert "allFiles" not in checksum
    assert checksum["numFiles"] == detail.numFiles == 2
    rows = tokyo.sql(f"select id, cast(placed as string) p from {TABLE} order by id").collect()
    assert [(r.id, r.p) for r in rows] == [(1, "1850-01-01 00:00:00"), (2, "1999-01-01 00:00:00")]
    tokyo.sql(f"drop table {TABLE}")
