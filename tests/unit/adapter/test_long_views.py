"""A view longer than a Derby metastore stores (no JVM): refused before Spark is asked where the
metastore is known to be Derby, left to the metastore's own (translated) error elsewhere."""

from types import SimpleNamespace

import pytest
from dbt_common.exceptions import DbtRuntimeError
from pyspark.errors import PySparkException

from dbt.adapters.spark_streams.credentials import StreamsConnectionMethod
from dbt.adapters.spark_streams.impl import SparkStreamsAdapter
from dbt.adapters.spark_streams.session.errors import (
    DERBY_VIEW_TEXT_CHARS,
    DERBY_VIEW_TEXT_LIMIT,
    VIEW_TOO_LONG,
    spark_error_message,
)

LONG = "select '" + "x" * DERBY_VIEW_TEXT_CHARS + "' as padding"
SHORT = "select 1 as one"


def refuse(method: StreamsConnectionMethod, metastore_url: str | None, sql: str) -> None:
    creds = SimpleNamespace(method=method, metastore_url=metastore_url)
    adapter = SimpleNamespace(config=SimpleNamespace(credentials=creds))
    SparkStreamsAdapter.refuse_view_derby_cannot_store(adapter, sql)  # type: ignore[arg-type]


@pytest.mark.parametrize("url", [None, "", "jdbc:derby://localhost:1527/metastore_db"])
def test_a_view_derby_cannot_store_is_refused_before_spark(url: str | None) -> None:
    with pytest.raises(DbtRuntimeError) as refused:
        refuse(StreamsConnectionMethod.SESSION, url, LONG)
    assert VIEW_TOO_LONG in str(refused.value)
    assert "Materialize the model as a table" in str(refused.value)
    refuse(StreamsConnectionMethod.SESSION, url, SHORT)


@pytest.mark.parametrize(
    ("method", "url"),
    [
        (StreamsConnectionMethod.SESSION, "jdbc:postgresql://db:5432/metastore"),
        (StreamsConnectionMethod.CONNECT, None),  # the server's metastore: unknown here
    ],
)
def test_other_metastores_are_left_to_answer(method: StreamsConnectionMethod, url: str) -> None:
    refuse(method, url, LONG)


def test_derbys_own_error_is_translated() -> None:
    error = PySparkException(f"[INTERNAL_ERROR] A {DERBY_VIEW_TEXT_LIMIT} '33012' to 32700")
    assert spark_error_message(error) == VIEW_TOO_LONG
