"""Delta's schema check of change reads is off for a statement holding a marked changes()
read, and back as it was for the connection's next statement."""

from types import SimpleNamespace

import pytest

from dbt.adapters.spark_streams.session.cursor import BoundConnection
from dbt.adapters.spark_streams.streams.delta.schema_changes import (
    READ_ACROSS_MARKER,
    REPLACED_MARKER,
    RETRY_ACROSS_MARKER,
    UNSAFE_READ,
)


class Conf:
    def __init__(self, **values: str) -> None:
        self.values = dict(values)

    def get(self, key: str, default: object = None) -> object:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


def session(conf: Conf) -> SimpleNamespace:
    return SimpleNamespace(conf=conf, sql=lambda sql: f"frame of {sql}")


def test_off_for_the_marked_statement_and_back_for_the_next() -> None:
    conf = Conf()
    connection = BoundConnection(session(conf))  # type: ignore[arg-type]
    connection.cursor().execute(f"create table t as select * from ({READ_ACROSS_MARKER} x)")
    assert conf.values == {UNSAFE_READ: "true"}
    connection.cursor().execute("select 1")
    assert conf.values == {}


def test_a_value_set_before_is_put_back() -> None:
    conf = Conf(**{UNSAFE_READ: "false"})
    connection = BoundConnection(session(conf))  # type: ignore[arg-type]
    connection.cursor().execute(f"select * from ({READ_ACROSS_MARKER} x)")
    connection.cursor().execute(f"select * from ({READ_ACROSS_MARKER} y)")
    assert conf.values == {UNSAFE_READ: "true"}
    connection.cursor().execute("select 2")
    assert conf.values == {UNSAFE_READ: "false"}


class Refusing:
    """A session whose Delta refuses a change read unless the check is off."""

    def __init__(self, conf: Conf) -> None:
        self.conf, self.ran = conf, []

    def sql(self, sql: str) -> str:
        self.ran.append(sql)
        if self.conf.get(UNSAFE_READ) != "true":
            raise RuntimeError("[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA] ...")
        return "frame"


def test_a_marked_statement_delta_refuses_runs_once_more_with_the_check_off() -> None:
    conf = Conf()
    spark = Refusing(conf)
    cursor = BoundConnection(spark).cursor()  # type: ignore[arg-type]
    cursor.execute(f"create table t as select * from ({RETRY_ACROSS_MARKER} x)")
    assert len(spark.ran) == 2 and conf.values == {UNSAFE_READ: "true"}


@pytest.mark.parametrize(
    "sql",
    [
        "select * from x",
        f"select * from ({REPLACED_MARKER} {RETRY_ACROSS_MARKER} {READ_ACROSS_MARKER} x)",
    ],
)
def test_nothing_else_runs_with_the_check_off(sql: str) -> None:
    conf = Conf()
    spark = Refusing(conf)
    with pytest.raises(Exception, match="DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA"):
        BoundConnection(spark).cursor().execute(sql)  # type: ignore[arg-type]
    assert len(spark.ran) == 1 and conf.values == {}
