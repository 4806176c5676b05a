"""Delta's retention intervals, and when a stream's pending commits stop being readable."""

from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.retention import (
    Retention,
    extension_days,
    format_interval,
    parse_interval,
)
from dbt.adapters.spark_streams.streams.delta.staleness import (
    CommitsSinceOffset,
    check_readable,
    expiry_warning,
    stale_after,
    stale_reason,
)
from dbt.adapters.spark_streams.streams.errors import StreamError

WEEK = Retention(deleted_files=timedelta(weeks=1), log=timedelta(days=30))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("interval 1 week", timedelta(weeks=1)),
        ("interval 7 days", timedelta(days=7)),
        ("30 days", timedelta(days=30)),
        ("INTERVAL 2 HOURS 30 MINUTES", timedelta(hours=2, minutes=30)),
        ("interval 3 seconds", timedelta(seconds=3)),
        ("interval 1 day", timedelta(days=1)),
    ],
)
def test_parse_interval(text: str, expected: timedelta) -> None:
    assert parse_interval(text) == expected


@pytest.mark.parametrize("text", ["", "interval", "1 fortnight", "a week", "7"])
def test_parse_interval_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="interval"):
        parse_interval(text)


@pytest.mark.parametrize(
    ("duration", "text"),
    [
        (timedelta(weeks=1), "7 days"),
        (timedelta(hours=2, minutes=30), "2 hours 30 minutes"),
        (timedelta(seconds=1), "1 second"),
        (timedelta(), "0 seconds"),
    ],
)
def test_format_interval(duration: timedelta, text: str) -> None:
    assert format_interval(duration) == text


def test_retention_defaults_are_deltas() -> None:
    assert Retention.from_properties({}) == WEEK
    shorter_log = Retention.from_properties({"delta.logRetentionDuration": "interval 2 days"})
    assert shorter_log.readable_for == timedelta(days=2)


@pytest.mark.parametrize("value", [-1, "14", 1.5, True, None])
def test_extension_days_rejects(value: object) -> None:
    with pytest.raises(StreamError, match="max_data_extension_time must be a whole number"):
        extension_days(value, "model.shop.mirror")


def commit(version: int, age: timedelta, operation: str = "WRITE", **parameters: str) -> dict:
    return {
        "version": version,
        "timestamp": datetime.now() - age,
        "operation": operation,
        "operationParameters": parameters,
    }


OFFSET_TIME = datetime(2026, 11, 1, 12, 30)


def pending(*commits: dict, offset: int = 4, pin: int = 6) -> CommitsSinceOffset:
    return CommitsSinceOffset("`s`.`t`", offset, pin, tuple(commits), OFFSET_TIME)


def test_fresh_range_is_readable() -> None:
    range_ = pending(commit(5, timedelta(days=6)), commit(6, timedelta(hours=1)))
    assert stale_reason(range_, WEEK, change_data_feed_now=True) is None
    check_readable("s1", range_, WEEK, change_data_feed_now=True)


def test_nothing_pending_is_never_stale() -> None:
    assert stale_reason(pending(offset=6, pin=6), WEEK, True) is None
    assert stale_after(pending(offset=6, pin=6), WEEK) is None


def test_oldest_unread_commit_beyond_retention() -> None:
    range_ = pending(commit(5, timedelta(days=8)), commit(6, timedelta(days=1)))
    why, earliest = stale_reason(range_, WEEK, True) or ("", -1)
    assert "older than the source's delta.deletedFileRetentionDuration (7 days)" in why
    assert earliest == 6
    with pytest.raises(StreamError) as raised:
        check_readable("s1", range_, WEEK, True)
    message = str(raised.value)
    assert "Stream s1 is stale" in message
    assert "Its offset is version 4 of `s`.`t` (committed 2026-11-01 12:30:00)" in message
    assert "earliest version Delta can still read changes from is 6" in message
    assert "--full-refresh" in message


def test_log_cleanup_removed_the_first_unread_commit() -> None:
    range_ = pending(commit(6, timedelta(hours=1)))
    assert stale_reason(range_, WEEK, True) == (
        "commits after version 4 were removed by log cleanup",
        6,
    )


def test_change_data_feed_turned_off_and_on_inside_the_range() -> None:
    off = '{"delta.enableChangeDataFeed":"false"}'
    on = '{"delta.enableChangeDataFeed":"true"}'
    range_ = pending(
        commit(5, timedelta(hours=2), "SET TBLPROPERTIES", properties=off),
        commit(6, timedelta(hours=1), "SET TBLPROPERTIES", properties=on),
        pin=7,
    )
    assert stale_reason(range_, WEEK, True) == (
        "Change Data Feed was turned off after its offset",
        7,
    )


def test_change_data_feed_off_now() -> None:
    range_ = pending(commit(5, timedelta(hours=2)), commit(6, timedelta(hours=1)))
    assert stale_reason(range_, WEEK, change_data_feed_now=False) is not None


def test_stale_after_and_warning() -> None:
    range_ = pending(commit(5, timedelta(days=6, hours=12)), commit(6, timedelta(hours=1)))
    deadline = stale_after(range_, WEEK)
    assert deadline is not None
    assert timedelta(hours=11) < deadline - datetime.now() < timedelta(hours=13)
    warning = expiry_warning("s1", range_, WEEK)
    assert warning is not None and warning.startswith("Stream s1 goes stale at")
    assert expiry_warning("s1", pending(commit(5, timedelta(days=1)), pin=5), WEEK) is None
