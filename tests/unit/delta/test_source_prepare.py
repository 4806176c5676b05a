"""What a build may write to a Delta source before it reads it (no JVM): Change Data Feed,
turned on only by a consumer's first build and only when allowed, and retention raised to
max_data_extension_time for consumers."""

from datetime import timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.retention import Retention
from dbt.adapters.spark_streams.streams.delta.source import SourceTable
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.delta_table import DeltaTable

WEEK = Retention(deleted_files=timedelta(days=7), log=timedelta(days=30))
NAME = "`raw`.`orders`"


def source(change_data_feed: bool, retention: Retention = WEEK) -> SourceTable:
    return SourceTable(NAME, ("id",), change_data_feed, retention)


def prepare(table: SourceTable, creating=True, consuming=True, auto_enable=True, days=0):
    return DeltaTable().prepare("s", table, creating, consuming, auto_enable, days)


def test_a_consumers_first_build_turns_change_data_feed_on() -> None:
    prepared, writes = prepare(source(False))
    assert prepared == source(True)
    assert writes == [
        (
            f"alter table {NAME} set tblproperties (delta.enableChangeDataFeed = true)",
            f"{NAME}: Change Data Feed turned on",
        )
    ]


@pytest.mark.parametrize(
    ("creating", "consuming", "auto_enable"),
    [(False, True, True), (True, False, True), (True, True, False)],
)
def test_no_other_build_turns_it_on(creating: bool, consuming: bool, auto_enable: bool) -> None:
    with pytest.raises(StreamError) as raised:
        prepare(source(False), creating, consuming, auto_enable)
    assert raised.value.msg == (
        f"Stream s: source {NAME} does not have Change Data Feed on, and streams read changes "
        f"from it. Run:\n  ALTER TABLE {NAME} SET TBLPROPERTIES (delta.enableChangeDataFeed = "
        "true)\nor let a consuming build do it (config auto_enable_change_tracking: true, the "
        "default). Changes made before it is on are never available."
    )


def test_a_source_with_the_feed_on_needs_no_write() -> None:
    assert prepare(source(True)) == (source(True), [])


def test_a_consumer_raises_both_retentions_to_the_extension() -> None:
    prepared, writes = prepare(source(True), days=14)
    assert prepared == source(True)
    [(statement, changes)] = writes
    assert statement == (
        f"alter table {NAME} set tblproperties (delta.deletedFileRetentionDuration = "
        "'interval 14 days')"
    )
    assert changes == (
        f"{NAME}: delta.deletedFileRetentionDuration raised from 7 days to 14 days so "
        "unconsumed streams stay readable (max_data_extension_time)"
    )
    short_log = Retention(deleted_files=timedelta(days=7), log=timedelta(days=2))
    [(statement, changes)] = prepare(source(True, short_log), days=14)[1]
    assert "delta.deletedFileRetentionDuration = 'interval 14 days', " in statement
    assert statement.endswith("delta.logRetentionDuration = 'interval 14 days')")
    assert changes.count("raised from") == 2


def test_retention_already_long_enough_or_a_peek_writes_nothing() -> None:
    assert prepare(source(True), days=7) == (source(True), [])
    assert prepare(source(True), consuming=False, days=14) == (source(True), [])


def test_turning_the_feed_on_and_extending_retention_are_two_writes() -> None:
    _, writes = prepare(source(False), days=14)
    assert [description.split(": ")[1][:18] for _, description in writes] == [
        "Change Data Feed t",
        "delta.deletedFileR",
    ]
