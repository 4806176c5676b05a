"""A file table's folder listed on the driver (session/driver/file_listing.py) gives exactly
the files Spark's binaryFile listing gives, spelled alike, so the file sets written from either
are read by the other.

Each folder is listed twice on one embedded session: by the engine's statements answered on
the driver, and by Spark running the same listing as SQL (a binaryFile scan); the rows must be
equal. The folders hold names that URIs escape, hidden and metadata files, an empty file, a
nested folder, partition folders; tables over them take the refreshed table's own listing or
binaryFile's. A dbt project then builds a stream from sets written by Spark's listing and goes
on with the driver's: no file is consumed twice.
"""

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from dbt_common.exceptions import DbtRuntimeError
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.session.cursor import BoundCursor
from dbt.adapters.spark_streams.session.driver.file_listing import DriverListings
from dbt.adapters.spark_streams.streams.files.table import FileTable
from dbt.adapters.spark_streams.streams.sql.quoting import string_literal
from tests.functional.delta import DeltaProject, sources_yml

SCHEMA = "folder_listing"
NAMES = (
    "a.parquet",
    "b c.parquet",
    "d+e.parquet",
    "f%20g.parquet",
    "h#i.parquet",
    "ünï çödé.parquet",
    "q'uote.parquet",
    "k=v.parquet",
)
SKIPPED = ("_hidden", ".dot", "_metadata", "x.parquet._COPYING_")


def land(folder: Path, *names: str, size: int = 10) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"x" * size)


@pytest.fixture(scope="module")
def landing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose own name needs escaping too, with every kind of name in it."""
    folder = tmp_path_factory.mktemp("listing") / "land ing+1"
    land(folder, *NAMES, *SKIPPED)
    land(folder, "empty.parquet", size=0)
    land(folder / "nested", "deeper.parquet")
    return folder


@pytest.fixture(scope="module")
def tables(spark: SparkSession, landing: Path) -> Iterator[dict[str, FileTable]]:
    daily = landing.parent / "daily"
    land(daily / "day=1", "a.parquet", "_SUCCESS")
    land(daily / "day=2", "b c.parquet", ".hidden")
    land(daily, "_SUCCESS")
    spark.sql(f"create schema if not exists {SCHEMA}")
    made = {
        "plain": f"(id int) using parquet location {string_literal(str(landing))}",
        "globbed": "(id int) using parquet options (pathGlobFilter '*.parquet') "
        f"location {string_literal(str(landing))}",
        "daily": "(id int, day int) using parquet partitioned by (day) "
        f"location {string_literal(str(daily))}",
    }
    for name, spec in made.items():
        spark.sql(f"drop table if exists {SCHEMA}.{name}")
        spark.sql(f"create table {SCHEMA}.{name} {spec}")
    spark.sql(f"msck repair table {SCHEMA}.daily")
    yield {name: file_table(spark, name) for name in made}
    for name in made:
        spark.sql(f"drop table {SCHEMA}.{name}")


def file_table(spark: SparkSession, name: str) -> FileTable:
    [detail] = spark.sql(f"describe detail {SCHEMA}.{name}").collect()
    return FileTable(f"`{SCHEMA}`.`{name}`", "parquet", detail.location, ("id",), ("int",), None)


def sparks_listing(spark: SparkSession, table: FileTable) -> set[tuple]:
    """The files as Spark's binaryFile scan lists them (what every set was written from)."""
    view = spark.sql(f"{table.listing_view_sql().split(' as ', 1)[1]}")
    return {tuple(row) for row in view.collect()}


def drivers_listing(
    spark: SparkSession, table: FileTable, refresh: bool = True
) -> tuple[set[tuple], str]:
    """The files as the driver lists them into the listing view, and the view's plan."""
    listings = DriverListings(spark)
    if refresh:
        assert listings.frame(table.refresh_sql()) is not None
    assert listings.frame(table.listing_view_sql()) is not None, "not listed on the driver"
    assert listings.indexes == {}  # a refresh's index is taken by the listing after it
    view = spark.sql(f"select * from {table.listing_view}")
    plan = view._jdf.queryExecution().executedPlan().toString()
    return {tuple(row) for row in view.collect()}, plan


@pytest.mark.parametrize("refresh", [True, False])
@pytest.mark.parametrize("name", ["plain", "globbed", "daily"])
def test_the_driver_lists_what_binaryfile_lists(
    spark: SparkSession, tables: dict[str, FileTable], name: str, refresh: bool
) -> None:
    ours, plan = drivers_listing(spark, tables[name], refresh)
    assert ours == sparks_listing(spark, tables[name])
    assert "LocalTableScan" in plan and "FileScan" not in plan  # no Spark job lists the folder


def test_names_spelled_as_binaryfile_spells_them(
    spark: SparkSession, tables: dict[str, FileTable], landing: Path
) -> None:
    ours, _ = drivers_listing(spark, tables["plain"])
    assert sorted(path for path, _, _ in ours) == sorted(f"file:{landing}/{n}" for n in NAMES)
    assert {size for _, size, _ in ours} == {10}  # not the empty file


def test_only_a_plain_tables_refresh_keeps_its_listing(
    spark: SparkSession, tables: dict[str, FileTable], landing: Path
) -> None:
    kept = {}
    for name in ("plain", "globbed", "daily"):
        listings = DriverListings(spark)
        listings.frame(tables[name].refresh_sql())
        kept[name] = list(listings.indexes)
    assert kept == {"plain": [f"file:{landing}"], "globbed": [], "daily": []}


def test_a_build_lists_the_folder_once(spark: SparkSession, tables: dict[str, FileTable]) -> None:
    """The refresh and the listing after it discover the folder's files once between them
    (Spark's own counter of files its listings found): on an object store every listing of
    a folder of thousands is a LIST request per thousand objects. A build's connection has
    a session of its own, where the table is not resolved yet."""
    metrics: Any = spark._jvm.org.apache.spark.metrics.source.HiveCatalogMetrics  # type: ignore[union-attr]
    metrics.reset()
    ours, _ = drivers_listing(spark.newSession(), tables["plain"])
    discovered = metrics.METRIC_FILES_DISCOVERED().getCount()
    # each file once: the named ones, the empty one, the nested one and `_metadata` (Spark's
    # listing keeps it for Parquet; the listing view's filter drops it)
    assert discovered == len(NAMES) + 3
    assert len(ours) == len(NAMES)


def test_a_refreshed_table_reads_the_files_its_listing_saw(
    spark: SparkSession, tmp_path: Path
) -> None:
    folder = tmp_path / "fresh"
    spark.sql(f"drop table if exists {SCHEMA}.fresh")
    spark.sql(f"create table {SCHEMA}.fresh (id int) using parquet location '{folder}'")
    spark.sql(f"insert into {SCHEMA}.fresh values (1)")
    table = file_table(spark, "fresh")
    assert len(drivers_listing(spark, table)[0]) == 1
    assert spark.sql(f"select count(*) from {SCHEMA}.fresh").first()[0] == 1  # cached now
    spark.sql(f"insert overwrite directory '{tmp_path / 'scratch'}' using parquet select 2 as id")
    [written] = (tmp_path / "scratch").glob("part-*")
    shutil.copy(written, folder / "landed.parquet")  # a file lands behind Spark's back
    assert spark.sql(f"select count(*) from {SCHEMA}.fresh").first()[0] == 1
    assert len(drivers_listing(spark, table)[0]) == 2
    assert spark.sql(f"select sum(id) from {SCHEMA}.fresh").first()[0] == 3
    spark.sql(f"drop table {SCHEMA}.fresh")


def test_a_vanished_folder_is_left_to_sparks_error(spark: SparkSession, tmp_path: Path) -> None:
    table = FileTable("`x`.`y`", "parquet", f"file:{tmp_path}/gone", ("id",), ("int",), None)
    assert DriverListings(spark).frame(table.listing_view_sql()) is None
    with pytest.raises(DbtRuntimeError, match="PATH_NOT_FOUND"):
        BoundCursor(spark).execute(table.listing_view_sql())


def test_a_cached_table_is_refreshed_by_spark(
    spark: SparkSession, tables: dict[str, FileTable]
) -> None:
    spark.sql(f"cache lazy table {SCHEMA}.plain")
    try:
        assert DriverListings(spark).frame(tables["plain"].refresh_sql()) is None
    finally:
        spark.sql(f"uncache table {SCHEMA}.plain")


LOG = (
    "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
    "select id from {{ stream(source('landing', 'events'), mode='insert_only') }}\n"
)


class TestSetsOfSparksListing(DeltaProject):
    """A stream whose sets Spark's listing wrote (as every set before the driver's listing)
    goes on with the driver's listing: nothing is consumed again, and new files are."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": sources_yml("landing", "events"), "events_log.sql": LOG}

    def test_no_file_twice(self, project, tmp_path_factory, monkeypatch):
        folder = tmp_path_factory.mktemp("upgrade") / "land ing+1 é"
        table = f"{project.test_schema}.events"
        project.run_sql(f"create table {table} (id int) using parquet location '{folder}'")
        spark_lists = monkeypatch.context()
        with spark_lists as patch:
            patch.setattr(DriverListings, "frame", lambda self, sql: None)
            for n, name in enumerate(["a b.parquet", "c+d.parquet", "é%20.parquet"]):
                self.land(project, folder, name, n)
            run_dbt(["run"])
            assert self.ids(project) == [0, 1, 2]
            self.land(project, folder, "e f.parquet", 3)
            run_dbt(["run"])
            assert self.ids(project) == [0, 1, 2, 3]

        _, log = run_dbt_and_capture(["run"])  # the driver lists now
        assert "no pending changes" in log
        self.land(project, folder, "g+h.parquet", 4)
        run_dbt(["run"])
        assert self.ids(project) == [0, 1, 2, 3, 4]
        [[set_id]] = project.run_sql(
            f"select source_id from {project.test_schema}.dbt_streams", fetch="all"
        )
        assert len(set_id.split("+")) == 3  # Spark's first set, then two parts

    @staticmethod
    def land(project, folder: Path, name: str, value: int) -> None:
        """A Parquet file of one row, written by Spark elsewhere and moved in by hand."""
        scratch = folder.parent / "scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        project.run_sql(
            f"insert overwrite directory '{scratch}' using parquet select {value} as id"
        )
        folder.mkdir(exist_ok=True)
        shutil.copy(next(scratch.glob("part-*")), folder / name)

    @staticmethod
    def ids(project) -> list[int]:
        rows = project.run_sql(f"select id from {project.test_schema}.events_log", fetch="all")
        return sorted(row[0] for row in rows)
