"""DESCRIBE HISTORY's map columns read back from the text HiveServer2 sends."""

import pytest

from dbt.adapters.spark_streams.streams.delta.history_rows import hive_map, with_mappings


def hive_text(entries: dict[str, str | None]) -> str:
    """A map as Spark's HiveResult.toHiveString prints it for HiveServer2: entries sorted,
    strings quoted, nothing escaped."""
    printed = sorted(f'"{k}":' + ("null" if v is None else f'"{v}"') for k, v in entries.items())
    return "{" + ",".join(printed) + "}"


# What a Spark Thrift Server sent for a source's SET TBLPROPERTIES commit, a WRITE, an UPDATE
# and a MERGE (operationParameters, then operationMetrics).
CAPTURED = {
    '{"properties":"{"delta.enableChangeDataFeed":"true"}"}': {
        "properties": '{"delta.enableChangeDataFeed":"true"}'
    },
    '{"mode":"Append","partitionBy":"[]"}': {"mode": "Append", "partitionBy": "[]"},
    '{"predicate":"["((id#5 % 3) = 1)"]"}': {"predicate": '["((id#5 % 3) = 1)"]'},
    '{"numAddedBytes":"1092","numAddedFiles":"1","numOutputRows":"5"}': {
        "numAddedBytes": "1092",
        "numAddedFiles": "1",
        "numOutputRows": "5",
    },
}


@pytest.mark.parametrize("text, expected", CAPTURED.items())
def test_captured_maps_read_back(text, expected):
    assert hive_map(text) == expected


@pytest.mark.parametrize(
    "entries",
    [
        {},
        {"a": "1"},
        {"isManaged": "true", "properties": '{"a":"b","c.d":"e"}', "z": "x"},
        {"matchedPredicates": '[{"actionType":"update"},{"actionType":"delete"}]'},
        {"predicate": '["(note = \'say "hi", "x":"y"\')"]', "zzz": "1"},
        {"description": None, "mode": "Overwrite"},
        {"statsOnLoad": "false", "clusterBy": "[]", "partitionBy": '["day"]'},
    ],
)
def test_printed_maps_read_back(entries):
    assert hive_map(hive_text(entries)) == entries


def test_unbalanced_value_takes_the_first_end():
    # a value with an unpaired bracket: its first possible end is taken
    assert hive_map('{"predicate":"["(x = \'[\')"]","z":"1"}') == {
        "predicate": "[\"(x = '[')\"]",
        "z": "1",
    }


@pytest.mark.parametrize("text", ["[1, 2]", '{"a" "b"}', '{"a":"b', '{"a":b}'])
def test_what_is_not_a_map_is_refused(text):
    with pytest.raises(ValueError):
        hive_map(text)


def test_rows_get_mappings_and_keep_the_rest():
    row = {
        "version": 3,
        "operation": "WRITE",
        "operationParameters": '{"mode":"Append","partitionBy":"[]"}',
        "operationMetrics": "",
        "userMetadata": '{"dbt_spark_streams": {}}',
    }
    assert with_mappings(row) == {
        "version": 3,
        "operation": "WRITE",
        "operationParameters": {"mode": "Append", "partitionBy": "[]"},
        "operationMetrics": {},
        "userMetadata": '{"dbt_spark_streams": {}}',
    }
    as_dicts = {"version": 1, "operationParameters": {"mode": "Append"}}
    assert with_mappings(as_dicts) is as_dicts
    assert hive_map("null") == {}
