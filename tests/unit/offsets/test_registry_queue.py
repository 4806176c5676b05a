"""The registry's queue: builds queue offsets, one flush per invocation writes them.

A fake SQL runner stands in for Spark: it records each statement and answers the one read a
flush makes (the log's newest transaction per stream). What is asserted is the SQL the
registry sends, which is all it does with Spark.
"""

from datetime import datetime

import pytest

from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.run import Row

NOW = datetime(2026, 11, 21, 12, 0, 0)


def record(name: str, txn: int, offset: int = 5) -> StreamRecord:
    return StreamRecord(
        name=name,
        schema="shop",
        source_table="`raw`.`orders`",
        source_id="id-1",
        source_type="delta",
        mode="standard",
        unique_key=("id",),
        consumer=f"model.shop.{name}",
        target_table=f"`shop`.`{name}`",
        offset_version=offset,
        offset_timestamp=NOW,
        txn_version=txn,
        created_on=NOW,
        last_consumed_on=NOW,
    )


class FakeSpark:
    """Records statements; the log holds `stored` (name -> newest txn_version)."""

    def __init__(self, stored: dict[str, int] | None = None, fail_inserts: int = 0) -> None:
        self.statements: list[str] = []
        self.stored = stored or {}
        self.fail_inserts = fail_inserts

    def run(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("show "):
            return [{"namespace": "shop", "viewName": "dbt_streams"}]
        if sql.startswith("insert into") and self.fail_inserts:
            self.fail_inserts -= 1
            raise RuntimeError("ConcurrentAppendException")
        if sql.startswith("describe detail"):
            return [{"numFiles": 1}]
        if "max(txn_version)" in sql:
            stored = self.stored.items()
            return [{"name": n, "txn_version": t} for n, t in stored if f"'{n}'" in sql]
        return []

    def inserts(self) -> list[str]:
        return [s for s in self.statements if s.startswith("insert into")]


def test_a_run_of_many_models_appends_once_with_the_newest_offset_of_each() -> None:
    spark = FakeSpark()
    registry = Registry(spark.run, "shop")
    registry.queue([record("orders", 3, offset=7)])
    registry.queue([record("customers", 2)])
    registry.queue([record("orders", 4, offset=9)])  # a later build of the same consumer
    assert registry.get("orders") == record("orders", 4, offset=9)  # queued, not yet written

    new, rolled = registry.flush()

    assert sorted(r.name for r in new) == ["customers", "orders"] and rolled == []
    [insert] = spark.inserts()
    assert insert.count("'orders'") == 1 and ", 9, " in insert
    assert not any("max(txn_version)" in s for s in spark.statements)  # new rows need no read
    assert not registry.has_queued()


def test_a_roll_forward_is_written_only_where_the_log_is_behind() -> None:
    spark = FakeSpark(stored={"orders": 3, "customers": 5})
    registry = Registry(spark.run, "shop")
    registry.queue_if_behind([record("orders", 4), record("customers", 5)])
    registry.queue_if_behind([record("refunds", 1)])  # never recorded at all

    new, rolled = registry.flush()

    assert new == [] and sorted(r.name for r in rolled) == ["orders", "refunds"]
    [insert] = spark.inserts()
    assert "'customers'" not in insert


def test_a_committed_offset_superseded_by_a_new_one_is_not_checked() -> None:
    spark = FakeSpark(stored={"orders": 1})
    registry = Registry(spark.run, "shop")
    registry.queue_if_behind([record("orders", 3)])  # the target's last commit
    registry.queue([record("orders", 4)])  # this build's commit

    new, rolled = registry.flush()

    assert [r.txn_version for r in new] == [4] and rolled == []
    assert not any("max(txn_version)" in s for s in spark.statements)


def test_the_same_transaction_queued_twice_is_written_once_as_queued_last() -> None:
    """A build's commit found again (the same transaction: a retried flush, or the roll-
    forward of the commit this build just queued) is written once, as queued last."""
    spark = FakeSpark(stored={"orders": 1})
    registry = Registry(spark.run, "shop")
    registry.queue([record("orders", 4, offset=7)])
    registry.queue([record("orders", 4, offset=8)])
    registry.queue_if_behind([record("orders", 4, offset=8)])

    new, rolled = registry.flush()

    assert new == [record("orders", 4, offset=8)] and rolled == []
    [insert] = spark.inserts()
    assert insert.count("'orders'") == 1 and ", 8, " in insert
    assert not any("max(txn_version)" in s for s in spark.statements)


def test_a_failed_append_keeps_the_queue_for_a_retry() -> None:
    spark = FakeSpark(fail_inserts=1)
    registry = Registry(spark.run, "shop")
    registry.queue([record("orders", 3)])

    with pytest.raises(RuntimeError):
        registry.flush()
    assert registry.has_queued()
    new, _ = registry.flush()
    assert [r.name for r in new] == ["orders"] and len(spark.inserts()) == 2


def test_every_16th_transaction_checks_the_log_for_compaction() -> None:
    spark = FakeSpark()
    registry = Registry(spark.run, "shop")
    registry.queue([record("orders", 15)])
    registry.flush()
    assert not any(s.startswith("describe detail") for s in spark.statements)
    registry.queue([record("orders", 16)])
    registry.flush()
    assert any(s.startswith("describe detail") for s in spark.statements)
