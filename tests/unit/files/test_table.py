"""A file-based source as an insert-only stream sees it (no JVM): which tables qualify, their
partition folders, the folder's one listing (a refresh, then the listing view) and the SQL
that reads it, a vanished location and files in unlisted folders."""

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.files.table import (
    FileTable,
    describe_file_table,
    list_folder,
    read_listing,
    unlisted_warning,
)
from dbt.adapters.spark_streams.streams.sql.run import Row

LOCATION = "file:/landing/events"


def described(provider: str | None, location: str | None = LOCATION, **detail: str) -> list[Row]:
    rows: list[Row] = [
        {"col_name": "id", "data_type": "bigint"},
        {"col_name": "day", "data_type": "string"},
    ]
    if "Partition Provider" in detail:
        rows += [
            {"col_name": "# Partition Information", "data_type": ""},
            {"col_name": "day", "data_type": "string"},
        ]
    rows += [{"col_name": "", "data_type": ""}, {"col_name": "# Detailed Table Information"}]
    extra = {"Provider": provider, "Location": location, **detail}
    rows += [{"col_name": k, "data_type": v} for k, v in extra.items() if v is not None]
    return [{"data_type": "", **row} for row in rows]


class Catalog:
    def __init__(self, table: list[Row] | None, views: tuple[str, ...] = ()) -> None:
        self.table, self.views = table, views
        self.statements: list[str] = []

    def __call__(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("describe table extended"):
            if self.table is None:
                raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND]")
            return self.table
        if sql.startswith("show partitions"):
            return [{"partition": "day=2026-11-24"}, {"partition": "day=2026-11-25"}]
        if sql.startswith("show views"):
            return [{"viewName": name} for name in self.views]
        return []


def describe(catalog: Catalog) -> FileTable:
    return describe_file_table(catalog, "landing", "events", "events_log__events")


def test_a_parquet_table_is_read_from_its_location() -> None:
    catalog = Catalog(described("parquet"))
    table = describe(catalog)
    assert table == FileTable(
        "`landing`.`events`", "parquet", LOCATION, ("id", "day"), ("bigint", "string"), None
    )
    assert catalog.statements == ["describe table extended `landing`.`events`"]
    assert table.listing_sql() == f"select path, size, modified from {table.listing_view}"
    assert table.unlisted_sql() is None


def test_a_folder_is_listed_once_into_its_view_just_after_the_tables_refresh() -> None:
    catalog = Catalog(described("parquet"))
    table = describe(catalog)
    list_folder(catalog, table, "events_log__events")
    view = table.listing_view
    assert view.startswith("_spark_streams_files_") and view.isidentifier()
    assert catalog.statements[1:] == [
        "refresh table `landing`.`events` /* dbt_spark_streams:listing_follows */",
        f"create or replace temporary view {view} as select path, length as size, "
        "modificationTime as modified from binaryFile.`file:/landing/events`",
    ]
    other = FileTable("`l`.`e`", "parquet", "file:/landing/other", (), (), None)
    assert other.listing_view != view  # one view per folder


def test_a_folder_gone_before_its_listing_names_the_fix() -> None:
    def gone(sql: str) -> list[Row]:
        if sql.startswith("create or replace temporary view"):
            raise RuntimeError("[PATH_NOT_FOUND] Path does not exist: file:/landing/events")
        return []

    with pytest.raises(StreamError, match="the location file:/landing/events of source"):
        list_folder(gone, TABLE, "s")


def test_a_table_whose_partitions_the_catalog_manages_lists_only_those_folders() -> None:
    table = describe(Catalog(described("CSV", **{"Partition Provider": "Catalog"})))
    assert table.provider == "csv"
    assert table.partitions == ("day=2026-11-24", "day=2026-11-25")
    folder = "regexp_replace(substring(path, length('file:/landing/events/') + 1), '/[^/]*$', '')"
    listed = f"{folder} in ('day=2026-11-24', 'day=2026-11-25')"
    assert table.listing_sql().endswith(f"from {table.listing_view} where {listed}")
    assert table.unlisted_sql() == (
        f"select count(*) as files from {table.listing_view} where not ({listed})"
    )


def test_a_partitioned_table_that_lists_its_folder_itself_reads_every_folder() -> None:
    table = describe(Catalog(described("json", **{"Partition Provider": "Filesystem"})))
    assert table.partitions is None


def test_no_registered_partition_lists_no_file() -> None:
    table = FileTable("`l`.`e`", "parquet", "file:/l/e/", ("id",), ("int",), ())
    assert table.listing_sql().endswith("'/[^/]*$', '') in (null)")


def error(catalog: Catalog) -> str:
    with pytest.raises(StreamError) as raised:
        describe(catalog)
    return raised.value.msg


def test_a_delta_table_points_to_append_only() -> None:
    assert error(Catalog(described("delta"))) == (
        "Stream events_log__events: source `landing`.`events` is a Delta table; mode "
        "'insert_only' reads the new files of a file-based table (Parquet, CSV, JSON, ...). Use "
        "mode='append_only' for the rows inserted into a Delta table since the offset."
    )


def test_a_view_points_to_the_table_modes() -> None:
    assert error(Catalog(described(None), views=("events",))) == (
        "Stream events_log__events: source landing.events is a view; mode 'insert_only' reads "
        "the new files of a file-based table. Use mode 'standard' or 'append_only' on a view."
    )


@pytest.mark.parametrize(
    ("table", "provider"),
    [(described("hive"), "hive"), (described("parquet", location=None), "parquet")],
)
def test_a_table_without_files_of_its_own_names_what_is_needed(
    table: list[Row], provider: str
) -> None:
    assert error(Catalog(table)) == (
        f"Stream events_log__events: source `landing`.`events` is not a file-based table with "
        f"a location (provider {provider}); mode 'insert_only' needs a table created `USING "
        "parquet` (or csv, json, orc, ...) `LOCATION '...'`."
    )


def test_a_missing_table_names_the_fix() -> None:
    message = error(Catalog(None))
    assert message.startswith("Stream events_log__events: cannot read source `landing`.`events`")
    assert message.endswith("Check that the table exists and that source()/ref() points to it.")


TABLE = FileTable("`landing`.`events`", "parquet", LOCATION, ("id",), ("int",), ("day=1",))


def test_a_vanished_location_names_the_fix() -> None:
    def gone(sql: str) -> list[Row]:
        raise RuntimeError("[PATH_NOT_FOUND] Path does not exist: file:/landing/events")

    with pytest.raises(StreamError) as raised:
        read_listing(gone, TABLE, "s", "select 1")
    assert raised.value.msg == (
        "Stream s: the location file:/landing/events of source `landing`.`events` no longer "
        "exists, so its files cannot be listed. Restore the folder, or point the table at its "
        "new location and rebuild the consumer with --full-refresh."
    )


def test_other_listing_errors_pass_through() -> None:
    def broken(sql: str) -> list[Row]:
        raise RuntimeError("[PERMISSION_DENIED]")

    with pytest.raises(RuntimeError, match="PERMISSION_DENIED"):
        read_listing(broken, TABLE, "s", "select 1")


@pytest.mark.parametrize(("files", "warned"), [(0, False), (3, True)])
def test_files_in_unlisted_folders_are_announced(files: int, warned: bool) -> None:
    warnings = unlisted_warning(lambda sql: [{"files": files}], TABLE, "s")
    assert bool(warnings) == warned
    if warned:
        assert warnings[0] == (
            "Stream s: 3 file(s) under file:/landing/events are in partition folders that "
            "`landing`.`events` does not list, so no stream reads them yet. Register the "
            "folders (MSCK REPAIR TABLE `landing`.`events`, or ALTER TABLE ... ADD PARTITION) "
            "and the next build consumes them."
        )
