"""dbt's listagg with a limit on Spark (no JVM): the ORDER BY clause read into sort keys, all of
which must sort one way."""

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_streams.impl import SparkStreamsAdapter


def sort_keys(clause: str | None) -> list[dict]:
    return SparkStreamsAdapter.listagg_sort_keys(None, clause)  # type: ignore[arg-type]


def test_the_keys_of_an_order_by_clause() -> None:
    assert sort_keys("ORDER BY a DESC, lower(b)\n desc") == [
        {"expression": "a", "descending": True},
        {"expression": "lower(b)", "descending": True},
    ]
    assert sort_keys("order by a asc, b") == [
        {"expression": "a", "descending": False},
        {"expression": "b", "descending": False},
    ]
    assert sort_keys(None) == []


def test_keys_sorting_both_ways_are_refused_naming_the_clause() -> None:
    with pytest.raises(DbtRuntimeError) as raised:
        sort_keys("order by a desc, b")
    assert str(raised.value.msg) == (
        "listagg with a limit sorts all its keys one way on Spark; got: order by a desc, b"
    )
