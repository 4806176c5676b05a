"""When a build purges its model's tombstones, and compacts a tracked history's kept events
(streams/cdc/tombstones.py)."""

from datetime import UTC, datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.cdc.tombstones import (
    PURGE_INTERVAL,
    STATS_COLUMNS,
    cluster_column,
    compaction_due,
    compacts,
    purge_due,
)
from dbt.adapters.spark_streams.streams.records.key_ranges import can_range

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("purged_at", "days", "due"),
    [
        (None, 2, True),  # never purged
        ("", 2, True),
        ((NOW - PURGE_INTERVAL).isoformat(), 2, True),  # an interval ago
        ((NOW - PURGE_INTERVAL + timedelta(seconds=1)).isoformat(), 2, False),
        ((NOW - timedelta(minutes=5)).isoformat(), 2, False),
        ((NOW - timedelta(minutes=5)).isoformat(), 0, True),  # no retention: every build
        ((NOW + timedelta(minutes=5)).isoformat(), 2, True),  # a clock that went back
        ("2026-11-30T11:59:00", 2, True),  # no zone: not trusted
        ("yesterday", 2, True),  # not a time
        ("2026-11-30T11:55:00Z", 2, False),  # another spelling of UTC
        ("2026-11-30T12:55:00+01:00", 2, False),  # another zone: five minutes ago
    ],
)
def test_a_purge_is_due_an_interval_after_the_last(purged_at, days, due):
    assert purge_due(purged_at, NOW, days) is due


@pytest.mark.parametrize(
    ("purged", "days", "compacted"),
    [
        (True, 2, True),  # the hourly purge compacts what the hour's appends left
        (False, 2, False),  # a build between purges appends only
        (True, 0, False),  # no retention: its purge left no tombstone before its append
        (False, 0, False),
    ],
)
def test_the_build_that_purges_compacts_unless_nothing_is_kept(purged, days, compacted):
    assert compacts(purged, days) is compacted


@pytest.mark.parametrize(
    ("compacted_at", "due"),
    [
        (None, True),  # never compacted
        ((NOW - PURGE_INTERVAL).isoformat(), True),
        ((NOW - PURGE_INTERVAL + timedelta(seconds=1)).isoformat(), False),
        ((NOW - timedelta(days=3)).isoformat(), True),
        ((NOW + timedelta(minutes=5)).isoformat(), True),  # a clock that went back
        ("2026-11-30T11:59:00", True),  # no zone: not trusted
        ("soon", True),
    ],
)
def test_kept_events_are_compacted_an_hour_after_the_last_compaction(compacted_at, due):
    assert compaction_due(compacted_at, NOW) is due


WIDE = [f"c{i}" for i in range(STATS_COLUMNS)]


@pytest.mark.parametrize(
    ("key", "names", "types", "column"),
    [
        (("id",), ["id", "name"], ["bigint", "string"], "id"),
        (("ID",), ["name", "id"], ["string", "int"], "id"),  # the table's spelling
        (("id", "ts"), ["id", "ts"], ["smallint", "timestamp"], "id"),  # its first column
        (("id",), ["id"], ["string"], None),  # no ranges of a string: nothing to cluster for
        (("ts", "id"), ["id", "ts"], ["int", "timestamp"], None),
        (("id",), ["name"], ["string"], None),  # not there (a table it cannot describe)
        (("id",), [*WIDE, "id"], [*(["int"] * STATS_COLUMNS), "int"], None),  # no statistics
        ((), ["id"], ["int"], None),
    ],
)
def test_kept_events_cluster_by_an_integer_first_key_delta_keeps_statistics_on(
    key, names, types, column
):
    assert cluster_column(key, names, types, can_range) == column
