"""A build's finish says what it did in dbt's result line, retries its write once across a
schema a MERGE evolved, and turns Delta's refusal into one error naming the model and its
streams, with no offset moved (no JVM: a fake Spark session holds the confs and history)."""

import re

import pytest

from dbt.adapters.spark_streams.streams.builds.build import BuildEnv, StreamBuild, finish
from dbt.adapters.spark_streams.streams.delta.schema_changes import (
    UNSAFE_READ,
    SchemaRead,
    SchemaReads,
)
from dbt.adapters.spark_streams.streams.delta.type_widening import SqlType, TypeChange
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.offsets.commit import USER_METADATA
from dbt.adapters.spark_streams.streams.offsets.registry import Registry
from dbt.adapters.spark_streams.streams.offsets.write_counts import WriteCounts
from dbt.adapters.spark_streams.streams.sql.run import Row
from tests.unit.offsets.test_registry import record

CONSUMER = "model.shop.orders_mirror"
TARGET = "`spark_catalog`.`shop`.`orders_mirror`"
WRITE = f"merge into {TARGET} using changes"
METRICS = {"numTargetRowsInserted": "4", "numTargetRowsUpdated": "1"}
SET = re.compile(r"SET `((?:[^`]|``)*)`=`((?:[^`]|``)*)`", re.DOTALL)
REFUSED = "[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA] Retrieving table changes ..."
MERGED = {"version": 6, "operation": "MERGE", "operationParameters": {}}


class Spark:
    """A session: SET / RESET hold its confs; the write fails with the `failures` given, one
    per attempt, then lands in the target's history; EXPLAIN returns `plan`."""

    def __init__(self, *failures: str, plan: str = "== Physical Plan ==") -> None:
        self.failures, self.plan = list(failures), plan
        self.statements: list[str] = []
        self.confs: dict[str, str] = {}
        self.writes: list[dict[str, str]] = []  # the session's confs at each write attempt
        self.history: list[Row] = []

    def run(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if found := SET.fullmatch(sql):
            self.confs[found[1].replace("``", "`")] = found[2].replace("``", "`")
        elif sql.startswith("RESET "):
            self.confs.pop(sql.removeprefix("RESET "))
        elif sql == WRITE:
            self.writes.append(dict(self.confs))
            if self.failures:
                raise RuntimeError(self.failures.pop(0))
            metadata = self.confs[USER_METADATA]
            self.history.insert(0, {"userMetadata": metadata, "operationMetrics": METRICS})
        elif sql.startswith(f"describe history {TARGET}"):
            return self.history
        elif sql.startswith("explain "):
            return [{"plan": self.plan}]
        return []


class Run:
    """A build's finish on `spark`, with what it handed the adapter."""

    def __init__(self, spark: Spark) -> None:
        self.spark, self.steps = spark, []
        self.source_writes: list[tuple[str, str]] = []
        self.registry = Registry(spark.run, "shop")
        self.env = BuildEnv(
            spark.run,
            self.registry,
            lambda sql, why: self.source_writes.append((sql, why)),
            self.steps.append,
        )

    def finish(self, build: StreamBuild) -> object:
        return finish(self.env, CONSUMER, build, WRITE, {})


def build_for(*streams: str, **fields: object) -> StreamBuild:
    reads = {name: (record(name, 1), "sql") for name in streams or ("orders_mirror__orders",)}
    return StreamBuild(CONSUMER, "shop", TARGET, True, False, True, reads=reads, **fields)  # type: ignore[arg-type]


def test_a_rebuild_from_a_view_names_the_target_its_reason_and_the_streams() -> None:
    run = Run(Spark())
    build = build_for("v", "v@orders", rebuilt_because="the view's changes outsize its rows")
    outcome = run.finish(build)
    assert outcome.message == (
        "OK, rebuilt orders_mirror: the view's changes outsize its rows; consumed v, v@orders"
    )
    assert outcome.counts == WriteCounts(inserted=4, updated=1, deleted=0)
    assert outcome.path == "rebuild"


def test_an_incremental_write_names_the_columns_it_widened() -> None:
    run = Run(Spark())
    build = build_for(widened=("amount: int -> bigint", "fee: float -> double"))
    outcome = run.finish(build)
    assert outcome.message == (
        "OK, consumed orders_mirror__orders: 4 inserted, 1 updated, 0 deleted; "
        "widened amount: int -> bigint, fee: float -> double"
    )
    assert outcome.path == "incremental"
    assert run.finish(build_for()).path == "incremental"


def test_each_source_write_goes_to_the_adapter_with_its_reason() -> None:
    run = Run(Spark())
    run.finish(build_for(source_writes=[("alter table `raw`.`orders` set x", "CDF on")]))
    assert run.source_writes == [("alter table `raw`.`orders` set x", "CDF on")]


def evolved(*commits: Row, replacing: Row | None = None) -> SchemaReads:
    """The stream's pending range 5..6 of `raw`.`orders`, holding `commits` after its first."""
    read = SchemaRead("orders_mirror__orders", "`raw`.`orders`", 5, 6, None, replacing, commits)
    return SchemaReads([read])


def test_a_write_delta_refused_across_a_merges_schema_runs_again_with_the_check_off() -> None:
    spark = Spark(REFUSED, plan=f"{REFUSED} at version 6")
    run = Run(spark)
    outcome = run.finish(build_for(schema_reads=evolved(MERGED)))
    assert outcome.message.startswith("OK, consumed orders_mirror__orders: 4 inserted")
    assert [UNSAFE_READ in confs for confs in spark.writes] == [False, True]
    assert spark.writes[1][UNSAFE_READ] == "true"
    assert "explain select * from table_changes('`raw`.`orders`', 5, 6)" in spark.statements
    assert spark.confs == {}  # every conf reset after the write
    assert run.steps == ["during_write", "after_commit"] and run.registry.has_queued()


def refused(spark: Spark, build: StreamBuild | None = None) -> pytest.ExceptionInfo:
    """The error of a build whose write fails; nothing queued for the registry."""
    run = Run(spark)
    with pytest.raises(Exception) as raised:
        run.finish(build or build_for())
    assert run.steps == ["during_write"] and not run.registry.has_queued()
    return raised


def test_another_delta_error_is_not_retried_and_names_the_model_and_streams() -> None:
    spark = Spark(
        "org.apache.spark.SparkException: Job aborted.\n[DELTA_MERGE_MULTIPLE_SOURCE_ROWS] "
        "Cannot perform Merge, caused by [DELTA_INTERNAL] x \n"
    )
    raised = refused(spark, build_for("orders_mirror__orders", "orders_mirror__customers"))
    assert raised.type is StreamError
    assert raised.value.msg == (
        "The build of orders_mirror reading stream(s) orders_mirror__orders, "
        "orders_mirror__customers failed in Delta, and nothing was written: no offset moved. "
        "Delta said: [DELTA_MERGE_MULTIPLE_SOURCE_ROWS] Cannot perform Merge, caused by "
        "[DELTA_INTERNAL] x"
    )
    assert len(spark.writes) == 1 and not spark.history


def test_a_refusal_the_range_does_not_explain_is_not_retried() -> None:
    spark = Spark(REFUSED, plan=REFUSED)  # the range holds no MERGE or write
    raised = refused(spark, build_for(schema_reads=evolved({"version": 6, "operation": "X"})))
    assert raised.value.msg.endswith(f"no offset moved. Delta said: {REFUSED}")
    assert len(spark.writes) == 1


def test_delta_errors_at_the_start_of_the_message_are_named_too() -> None:
    raised = refused(Spark("[DELTA_CAST_OVERFLOW_IN_TABLE_WRITE] Cannot write 2^40 into int"))
    assert raised.value.msg == (
        "The build of orders_mirror reading stream(s) orders_mirror__orders failed in Delta, "
        "and nothing was written: no offset moved. Delta said: "
        "[DELTA_CAST_OVERFLOW_IN_TABLE_WRITE] Cannot write 2^40 into int"
    )


def test_any_other_error_is_raised_as_it_came() -> None:
    raised = refused(Spark("the cluster went away"))
    assert raised.type is RuntimeError and str(raised.value) == "the cluster went away"


AMOUNT = TypeChange("amount", SqlType("int"), SqlType("bigint"))


def test_a_value_an_older_target_cannot_take_is_said_as_the_fix() -> None:
    build = build_for(unwidened=(AMOUNT,))
    raised = refused(Spark("[DELTA_CAST_OVERFLOW_IN_TABLE_WRITE] 2^40 into int"), build)
    assert raised.type is StreamError
    assert raised.value.msg.startswith(
        "Model orders_mirror: column amount (int -> bigint) widened in its source, and its "
        f"target {TARGET} cannot follow in place"
    )
    assert f"Run ALTER TABLE {TARGET} SET TBLPROPERTIES" in raised.value.msg
    other = refused(Spark("[DELTA_MERGE_MULTIPLE_SOURCE_ROWS] x"), build_for(unwidened=(AMOUNT,)))
    assert other.value.msg.endswith("Delta said: [DELTA_MERGE_MULTIPLE_SOURCE_ROWS] x")


def test_a_merge_and_a_replaced_schema_in_the_refused_range_fail_naming_the_fix() -> None:
    replaced = {"version": 6, "operation": "REPLACE COLUMNS", "operationParameters": {}}
    build = build_for(schema_reads=evolved(MERGED, replacing=replaced))
    raised = refused(Spark(REFUSED, plan=REFUSED), build)
    assert raised.type is StreamError
    assert raised.value.msg.startswith(
        "Stream orders_mirror__orders: reading across version 6 of `raw`.`orders`"
    )
    assert raised.value.msg.endswith("dbt run -s orders_mirror --full-refresh")
