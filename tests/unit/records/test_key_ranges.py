"""The key ranges a stream's MERGE names for Delta's file skipping (records/key_ranges.py)."""

import pytest

from dbt.adapters.spark_streams.streams.records.key_ranges import (
    can_range,
    target_predicate,
    wants_ranges,
)


@pytest.mark.parametrize(
    ("data_type", "ranged"),
    [
        *[("bigint", True), ("int", True), ("SMALLINT", True), ("tinyint", True)],
        *[("string", False), ("decimal(10,0)", False), ("timestamp", False), (None, False)],
    ],
)
def test_only_integer_keys_get_ranges(data_type: str | None, ranged: bool) -> None:
    assert can_range(data_type) is ranged


def test_ranges_in_key_order_and_a_null_key() -> None:
    rows = [
        {"low": 900, "high": 1_200, "has_null": False},
        {"low": None, "high": None, "has_null": True},
        {"low": 3, "high": 5, "has_null": False},
    ]
    assert target_predicate("t.`id`", rows) == (
        "(t.`id` between 3 and 5 or t.`id` between 900 and 1200 or t.`id` is null)"
    )


def test_a_null_key_in_a_range_group_keeps_null_target_keys() -> None:
    rows = [{"low": 1, "high": 9, "has_null": True}]
    assert target_predicate("t.`k`", rows) == "(t.`k` between 1 and 9 or t.`k` is null)"


def test_no_changes_no_predicate() -> None:
    assert target_predicate("t.`id`", []) == ""


@pytest.mark.parametrize(
    ("setting", "target_bytes", "wanted"),
    [
        (None, 300 * 2**20, True),
        (None, 200 * 2**20, False),
        (None, None, False),
        (True, 10, True),
        (False, 2**40, False),
    ],
)
def test_auto_asks_for_ranges_only_for_a_large_target(
    setting: bool | None, target_bytes: int | None, wanted: bool
) -> None:
    assert wants_ranges(setting, target_bytes) is wanted
