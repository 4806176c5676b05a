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


class TTransportException(Exception):
    """Thrift's transport error, as PyHive raises it when the server goes (by name only)."""


@pytest.fixture
def thrift_manager(monkeypatch: pytest.MonkeyPatch) -> SparkStreamsConnectionManager:
    """A manager for a `thrift` profile whose dbt-spark execute fails after its exception
    handler, as reading a result's rows from a server that has gone does."""
    from types import SimpleNamespace

    from dbt.adapters.spark.connections import SparkConnectionManager

    from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
    from dbt.adapters.spark_streams.session.servers.lost_servers import forget_lost_servers

    def fetching_from_a_gone_server(*args: object, **kwargs: object) -> None:
        raise TTransportException("TSocket read 0 bytes")

    monkeypatch.setattr(SparkConnectionManager, "execute", fetching_from_a_gone_server)
    forget_lost_servers()
    manager = handler()
    profile = {"schema": "s", "host": "10.0.0.5", "port": 10001, "method": "thrift"}
    manager.profile = SimpleNamespace(  # type: ignore[assignment]
        credentials=SparkStreamsCredentials.from_dict(profile)
    )
    return manager


def test_a_server_lost_while_a_result_is_read_is_a_lost_server(thrift_manager) -> None:
    with pytest.raises(SparkUnreachable) as raised:
        thrift_manager.execute("select * from t", fetch=True)
    assert raised.value.msg.startswith(
        "The Spark Thrift Server at 10.0.0.5:10001 stopped answering (TTransportException: "
        "TSocket read 0 bytes)."
    )
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
