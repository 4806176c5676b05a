"""A stream's source as DESCRIBE TABLE EXTENDED and SHOW TBLPROPERTIES describe it (no JVM):
columns and types, Change Data Feed, retention and location, and every source no stream can
follow refused with the object and the fix."""

from datetime import timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.retention import Retention
from dbt.adapters.spark_streams.streams.delta.source import (
    SourceTable,
    describe_source,
    spelled_key,
)
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import Row

DETAIL = "# Detailed Table Information"


def described(columns: list[tuple[str, str]], provider: str | None = "delta") -> list[Row]:
    """DESCRIBE TABLE EXTENDED of a table partitioned by its first column."""
    rows = [{"col_name": name, "data_type": kind} for name, kind in columns]
    rows += [
        {"col_name": "# Partition Information", "data_type": ""},
        {"col_name": "# col_name", "data_type": "data_type"},
        {"col_name": columns[0][0], "data_type": columns[0][1]},
        {"col_name": "", "data_type": ""},
        {"col_name": DETAIL, "data_type": ""},
        {"col_name": "Location", "data_type": "file:/warehouse/raw.db/orders"},
    ]
    if provider:
        rows.append({"col_name": "Provider", "data_type": provider})
    return rows


class Catalog:
    def __init__(
        self,
        table: list[Row] | None,
        properties: dict[str, str] | None = None,
        views: tuple[str, ...] = (),
    ) -> None:
        self.table, self.properties, self.views = table, properties or {}, views

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("describe table extended"):
            if self.table is None:
                raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] `raw`.`orders`")
            return self.table
        if sql.startswith("show tblproperties"):
            return [{"key": key, "value": value} for key, value in self.properties.items()]
        if sql.startswith("show views"):
            return [{"viewName": name} for name in self.views]
        raise AssertionError(sql)


COLUMNS = [("id", "int"), ("tags", "map<string,int>"), ("Amount", "decimal(10,2)")]


def describe(run: Catalog, stream: str) -> SourceTable:
    return describe_source(run, CatalogEntry(run, "raw", "orders"), stream)


def test_a_delta_source_with_its_columns_feed_retention_and_location() -> None:
    properties = {
        "delta.enableChangeDataFeed": "TRUE",
        "delta.logRetentionDuration": "interval 2 days",
    }
    source = describe(Catalog(described(COLUMNS), properties), "s")
    assert source == SourceTable(
        name="`raw`.`orders`",
        columns=("id", "tags", "Amount"),
        change_data_feed=True,
        retention=Retention(deleted_files=timedelta(days=7), log=timedelta(days=2)),
        column_types=("int", "map<string,int>", "decimal(10,2)"),
        location="file:/warehouse/raw.db/orders",
    )


def test_change_data_feed_is_off_unless_the_property_says_true() -> None:
    off = {"delta.enableChangeDataFeed": "false"}
    assert not describe(Catalog(described(COLUMNS), off), "s").change_data_feed
    assert not describe(Catalog(described(COLUMNS)), "s").change_data_feed


def test_a_column_named_provider_is_not_the_tables_provider() -> None:
    table = described([("id", "int"), ("Provider", "string")], provider=None)
    with pytest.raises(StreamError, match="is not a Delta table"):
        describe(Catalog(table), "s")


def error(catalog: Catalog, stream: str = "orders_mirror__orders") -> str:
    with pytest.raises(StreamError) as raised:
        describe(catalog, stream)
    return raised.value.msg


def test_a_missing_source_names_the_table_and_the_fix() -> None:
    message = error(Catalog(None))
    assert message.startswith("Stream orders_mirror__orders: cannot read source `raw`.`orders` (")
    assert "TABLE_OR_VIEW_NOT_FOUND" in message
    assert message.endswith("Check that the table exists and that source()/ref() points to it.")


def test_a_parquet_source_points_to_insert_only() -> None:
    assert error(Catalog(described(COLUMNS, provider="parquet"))) == (
        "Stream orders_mirror__orders: source `raw`.`orders` is a parquet table; standard and "
        "append_only streams need a Delta table with Change Data Feed. Read its new files with "
        "stream(..., mode='insert_only'), or convert it with `CONVERT TO DELTA` (or recreate "
        "it `USING delta`)."
    )


def test_a_view_is_told_apart_from_a_table_of_another_format() -> None:
    table = described(COLUMNS, provider=None)
    with pytest.raises(StreamError) as raised:
        describe(Catalog(table, views=("orders",)), "changes(raw.orders)")
    assert raised.value.msg == (
        "changes(raw.orders): source raw.orders is a view; only stream() and changes() read "
        "views. Point it at the Delta table(s) the view reads."
    )
    assert error(Catalog(table, views=("orders_v",))) == (
        "Stream orders_mirror__orders: source `raw`.`orders` is not a Delta table; standard "
        "and append_only streams need a Delta table with Change Data Feed."
    )


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ("a`b", "column 'a`b' of source `raw`.`orders` contains a backtick. Delta cannot"),
        (
            "Metadata_Action",
            "column 'Metadata_Action' of source `raw`.`orders` has the name of the stream's own "
            "metadata_action column (Spark compares names case-insensitively)",
        ),
        (
            "_change_type",
            "has the name of the change feed's own _change_type column, and Delta refuses to "
            "turn the Change Data Feed on",
        ),
        (
            "_Commit_Version",
            "has the name of the change feed's own _commit_version column (Spark compares "
            "names case-insensitively), so every change read",
        ),
    ],
)
def test_columns_no_stream_can_carry_are_refused(column: str, expected: str) -> None:
    message = error(Catalog(described([("id", "int"), (column, "string")])))
    assert message.startswith("Stream orders_mirror__orders: ")
    assert expected in message


def test_ordinary_names_near_reserved_ones_are_fine() -> None:
    columns = [("id", "int"), ("change_type", "string"), ("metadata", "string")]
    assert describe(Catalog(described(columns)), "s").columns == (
        "id",
        "change_type",
        "metadata",
    )


SOURCE = SourceTable(
    "`raw`.`orders`", ("Id", "Region", "amount"), True, Retention.from_properties({})
)


def test_a_key_is_spelled_as_the_source_spells_it() -> None:
    assert spelled_key("s", ("id", "REGION", "Id"), SOURCE) == ("Id", "Region")


def test_a_key_column_the_source_lacks_is_named_with_the_columns() -> None:
    with pytest.raises(StreamError) as raised:
        spelled_key("changes(raw.orders)", ("id", "customer"), SOURCE)
    assert raised.value.msg == (
        "changes(raw.orders): unique_key column(s) customer not in source `raw`.`orders` "
        "(columns: Id, Region, amount). Name key columns of the source table."
    )
