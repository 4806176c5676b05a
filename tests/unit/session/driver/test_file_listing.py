"""Which statements the driver's folder listing takes (session/driver/file_listing.py),
without a JVM: exactly the two the engine writes for a folder's listing (files/table.py),
whatever the table's and the folder's names hold, and nothing else; a session without a JVM
leaves them to Spark."""

import pytest

from dbt.adapters.spark_streams.session.driver.file_listing import (
    LISTING_VIEW,
    REFRESH,
    DriverListings,
    unquote,
)
from dbt.adapters.spark_streams.streams.files.table import FileTable
from dbt.adapters.spark_streams.streams.sql.quoting import quote_path

HOSTILE = ("la`nd */ -- ;", "ev'ents`")
LOCATIONS = ("file:/landing/events", "file:/tmp/it's `here` */; -- x", "s3a://bucket/a b/ç")


@pytest.mark.parametrize("location", LOCATIONS)
@pytest.mark.parametrize("parts", [("landing", "events"), HOSTILE])
def test_the_engines_two_statements_are_taken(parts: tuple[str, str], location: str) -> None:
    table = FileTable(quote_path(*parts), "parquet", location, ("id",), ("int",), None)
    refresh = REFRESH.fullmatch(table.refresh_sql())
    assert refresh is not None and refresh["name"] == table.name
    listing = LISTING_VIEW.fullmatch(table.listing_view_sql())
    assert listing is not None
    assert listing["view"] == table.listing_view
    assert unquote(listing["location"]) == location


@pytest.mark.parametrize(
    "sql",
    [
        "refresh table `landing`.`events`",  # a user's own refresh
        "refresh table `landing`.`events` /* dbt_spark_streams:listing_follows */; drop table x",
        "create or replace temporary view v as select path, length as size, modificationTime "
        "as modified from binaryFile.`file:/landing/events`",  # not the engine's view
        "create or replace temporary view _spark_streams_files_ab as select path, length as "
        "size, modificationTime as modified from binaryFile.`file:/landing/events` where true",
        "create or replace temporary view _spark_streams_files_ab as select * from "
        "binaryFile.`file:/landing/events`",
        "select * from _spark_streams_files_ab",
    ],
)
def test_anything_else_is_left_to_spark(sql: str) -> None:
    assert REFRESH.fullmatch(sql) is None and LISTING_VIEW.fullmatch(sql) is None


def test_names_lose_their_quotes() -> None:
    assert unquote("`it``s`") == "it`s"
    assert unquote("events") == "events"


def test_a_session_without_a_jvm_is_left_to_spark() -> None:
    class ConnectLike:
        """Spark Connect's session has neither `_jsparkSession` nor `_jvm`."""

    listings = DriverListings(ConnectLike())  # type: ignore[arg-type]
    table = FileTable("`l`.`e`", "parquet", "file:/l/e", ("id",), ("int",), None)
    assert listings.frame(table.refresh_sql()) is None
    assert listings.frame(table.listing_view_sql()) is None
