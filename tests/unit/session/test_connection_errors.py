"""dbt-spark's exception handler turns every error into a plain DbtRuntimeError; a lost Spark
must keep its type through it, so the engine does not blame a stream's source for it."""

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_streams.connections import SparkStreamsConnectionManager
from dbt.adapters.spark_streams.streams.errors import SparkUnreachable


def handler() -> SparkStreamsConnectionManager:
    return object.__new__(SparkStreamsConnectionManager)  # the handler needs no profile


def test_a_lost_server_keeps_its_type() -> None:
    lost = pytest.raises(SparkUnreachable, match="stopped answering")
    with lost, handler().exception_handler("select 1"):
        raise SparkUnreachable("The Spark Connect server stopped answering")


def test_other_errors_are_dbt_sparks_runtime_errors() -> None:
    failed = pytest.raises(DbtRuntimeError, match="no such table")
    with failed as raised, handler().exception_handler("select 1"):
        raise ValueError("no such table")
    assert not isinstance(raised.value, SparkUnreachable)
