"""show_streams' output: an aligned table and JSON lines (streams/status/listing.py)."""

import json
from datetime import datetime

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.status.listing import format_streams

STREAMS = [
    {
        "name": "customers_mirror__customers",
        "source_table": "`shop`.`customers`",
        "source_type": "table",
        "mode": "standard",
        "consumer": "model.shop.customers_mirror",
        "offset_version": 12,
        "offset_timestamp": datetime(2026, 11, 25, 9, 1, 2, 345000),
        "stale": False,
        "stale_after": None,
        "last_consumed_on": datetime(2026, 11, 25, 9, 1, 3),
        "owner_gone": False,
    },
    {
        "name": "log__events",
        "source_table": "`raw`.`events`",
        "source_type": "files",
        "mode": "insert_only",
        "consumer": "model.shop.log",
        "offset_version": 3,
        "offset_timestamp": datetime(2026, 11, 24, 23, 0, 0),
        "stale": True,
        "stale_after": None,
        "last_consumed_on": None,
        "owner_gone": True,
    },
]


def test_the_table_aligns_every_column_under_its_title() -> None:
    lines = format_streams(STREAMS, "table").splitlines()
    assert lines[0].split("|")[1].strip() == "name"
    assert set(lines[1]) <= {"|", "-", " "}
    assert len({len(line) for line in lines}) == 1
    bars = {i for i, char in enumerate(lines[0]) if char == "|"}
    assert all({i for i, char in enumerate(line) if char == "|"} == bars for line in lines)
    cells = [cell.strip() for cell in lines[3].split("|")[1:-1]]
    assert cells == [
        "log__events",
        "`raw`.`events`",
        "files",
        "insert_only",
        "model.shop.log",
        "3",
        "2026-11-24 23:00:00",
        "true",
        "-",
        "-",
        "true",
    ]


def test_json_lines_carry_every_field_one_stream_per_line() -> None:
    lines = format_streams(STREAMS, "json").splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 2
    assert first["offset_timestamp"] == "2026-11-25 09:01:02.345000"
    assert first["stale"] is False and first["stale_after"] is None
    assert first["offset_version"] == 12


def test_an_unknown_format_names_the_ones_there_are() -> None:
    with pytest.raises(StreamError, match="format 'csv' is not one of table, json"):
        format_streams(STREAMS, "csv")


def test_cells_are_padded_on_the_right_and_times_shown_to_the_second() -> None:
    lines = format_streams(STREAMS[:1], "table").splitlines()
    cells = lines[2].split("|")[1:-1]
    assert cells[0] == " customers_mirror__customers "
    assert cells[5].startswith(" 12 ") and cells[5].strip() == "12"
    assert cells[6] == " 2026-11-25 09:01:02 "


def test_json_writes_what_it_has_no_type_for_as_text() -> None:
    [line] = format_streams([{"name": "s", "unique_key": ("id", "day")}], "json").splitlines()
    assert json.loads(line) == {"name": "s", "unique_key": ["id", "day"]}
    assert (
        format_streams([{"name": "s", "key": {"a"}}], "json") == '{"name": "s", "key": "{\'a\'}"}'
    )


def test_an_unknown_format_names_the_way_to_json() -> None:
    with pytest.raises(StreamError) as raised:
        format_streams(STREAMS, "csv")
    assert raised.value.msg == (
        "show_streams: format 'csv' is not one of table, json. Run `dbt run-operation "
        "show_streams --args '{format: json}'` for JSON lines."
    )
