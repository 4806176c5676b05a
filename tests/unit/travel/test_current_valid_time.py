"""current_valid_time(): the rows whose period covers the reference time, without the period
columns; errors name the columns there are and the reference times there are."""

from datetime import UTC, datetime

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.travel.current_valid_time import current_valid_time_sql

COLUMNS = ["id", "City", "Valid_From", "valid_to"]
STARTED = datetime(2026, 3, 3, 9, 0, 0, tzinfo=UTC)


def test_transaction_time_is_the_invocation_start_as_an_instant() -> None:
    sql = current_valid_time_sql(
        "shop.h", COLUMNS, ("valid_from", "VALID_TO"), "transaction", STARTED
    )
    t = f"timestamp_micros({int(STARTED.timestamp()) * 1_000_000})"
    assert sql == (
        f"(select `id`, `City` from shop.h where `Valid_From` <= {t} "
        f"and (`valid_to` is null or {t} < `valid_to`))"
    )


def test_now_is_each_statement_s_current_timestamp() -> None:
    sql = current_valid_time_sql("shop.h", COLUMNS, ("valid_from", "valid_to"), "now", STARTED)
    assert (
        "`Valid_From` <= current_timestamp() and (`valid_to` is null or current_timestamp() <"
        in sql
    )


def test_a_naive_start_counts_as_utc() -> None:
    naive = datetime(2026, 3, 3, 9, 0, 0)
    aware = current_valid_time_sql(
        "h", COLUMNS, ("valid_from", "valid_to"), "transaction", STARTED
    )
    assert (
        current_valid_time_sql("h", COLUMNS, ("valid_from", "valid_to"), "transaction", naive)
        == aware
    )


@pytest.mark.parametrize(
    ("period", "at", "error"),
    [
        (
            ("dbt_valid_from", "valid_to"),
            "transaction",
            "current_valid_time(shop.h): valid_from='dbt_valid_from' is not a column of shop.h; "
            "its columns are id, City, Valid_From, valid_to. Name its period columns (for a dbt "
            "snapshot: valid_from='dbt_valid_from', valid_to='dbt_valid_to').",
        ),
        (("valid_from", "until"), "transaction", "valid_to='until' is not a column of shop.h"),
        (
            ("valid_from", "valid_to"),
            "later",
            "current_valid_time(shop.h): at='later' is not a reference time; use 'transaction' "
            "(when this dbt invocation started, the same in every model) or 'now' (each "
            "statement's current_timestamp()).",
        ),
    ],
)
def test_errors_name_the_fix(period: tuple, at: str, error: str) -> None:
    with pytest.raises(StreamError) as raised:
        current_valid_time_sql("shop.h", COLUMNS, period, at, STARTED)
    assert error in str(raised.value)
