"""A build's life cycle on a fake SQL runner: the plan, reconciliation and the commit protocol.

What is asserted is what the engine sends to Spark (the statements, the confs set around the
write) and what it hands the registry, which is all a build does.
"""

import json
from dataclasses import replace

import pytest

from dbt.adapters.spark_streams.streams.builds.build import (
    BuildEnv,
    StreamBuild,
    begin,
    finish,
    plan,
    write_confs,
)
from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.errors import StreamConsumedElsewhere, StreamError
from dbt.adapters.spark_streams.streams.offsets.commit import BuildCommit
from dbt.adapters.spark_streams.streams.offsets.registry import Registry
from dbt.adapters.spark_streams.streams.offsets.write_counts import WriteCounts
from dbt.adapters.spark_streams.streams.sql.run import Row
from tests.unit.offsets.test_registry import record

CONSUMER = "model.shop.orders_mirror"
TARGET = "`shop`.`orders_mirror`"
WRITE = f"merge into {TARGET} using changes"
# What Delta's history says a MERGE wrote (its operationMetrics, as strings).
WRITE_METRICS = {"numTargetRowsInserted": "4", "numTargetRowsUpdated": "1", "numOutputRows": "5"}
CONFIG = ConsumerConfig.from_model_config("orders_mirror", {"unique_key": "id"})


class FakeSpark:
    """Records statements; the target's history holds the stream commits in `history`."""

    def __init__(self, history: list[BuildCommit] | None = None, lands: bool = True) -> None:
        self.statements: list[str] = []
        self.history = history or []
        self.lands = lands
        self.metadata = ""

    def run(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("SET `spark.databricks.delta.commitInfo.userMetadata`"):
            self.metadata = sql.split("=", 1)[1].strip("`").replace("``", "`")
        if sql == WRITE and self.lands:
            self.history.insert(0, BuildCommit.from_user_metadata(self.metadata))
        if sql.startswith(f"describe history {TARGET}"):
            return [
                {"userMetadata": c.user_metadata(), "operationMetrics": WRITE_METRICS}
                for c in self.history
                if c
            ]
        return []


class Steps:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, step: str) -> None:
        self.seen.append(step)


def env_for(spark: FakeSpark) -> tuple[BuildEnv, Registry, Steps, list[str]]:
    registry, steps, writes = Registry(spark.run, "shop"), Steps(), []
    env = BuildEnv(spark.run, registry, lambda sql, _message: writes.append(sql), steps)
    return env, registry, steps, writes


def build_for(exists: bool = True, **fields: object) -> StreamBuild:
    return StreamBuild(CONSUMER, "shop", TARGET, exists, False, True, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("existing_is_delta", "full_refresh", "has_write", "expected"),
    [
        (None, False, True, (True, False, False)),  # first build
        (False, False, True, (True, True, False)),  # a view or parquet table is replaced
        (True, True, False, (True, False, False)),  # --full-refresh
        (True, False, True, (False, False, True)),  # changes to write
        (True, False, False, (False, False, False)),  # nothing committed since the offsets
    ],
)
def test_plan(existing_is_delta, full_refresh, has_write, expected) -> None:
    build = build_for(moves=has_write, reads={"s": (record("s", 1), "sql")})
    decided = plan(CONFIG, build, existing_is_delta, full_refresh)
    assert (decided.rebuild, decided.drop_existing, decided.has_changes) == expected
    assert decided.consumer is CONFIG


def test_a_target_created_by_a_dry_run_is_rebuilt_with_the_streams() -> None:
    fresh = BuildCommit(CONSUMER, "b1", 2, (), fresh_target=True)
    build = begin(FakeSpark([fresh]).run, build_for())
    assert plan(CONFIG, build, True, False).rebuild
    # into the table it has (its id kept for the streams that follow it), unless the run
    # asked for a new one
    assert plan(CONFIG, build, True, False).keeps_table
    assert not plan(CONFIG, build, True, True).keeps_table


@pytest.mark.parametrize(
    ("existing_is_delta", "full_refresh"), [(None, False), (False, False), (True, True)]
)
def test_a_first_build_a_replaced_relation_and_full_refresh_replace_the_table(
    existing_is_delta, full_refresh
) -> None:
    build = build_for(moves=True, reads={"s": (record("s", 1), "sql")})
    decided = plan(CONFIG, build, existing_is_delta, full_refresh)
    assert decided.rebuild and not decided.keeps_table


def test_a_model_without_stream_calls_is_refused() -> None:
    with pytest.raises(StreamError) as error:
        plan(CONFIG, None, True, False)
    assert error.value.msg.startswith(
        "Model orders_mirror: a stream_incremental model consumes the streams its own SQL "
        "reads with stream(), and orders_mirror calls none, so every run would write all of "
        "its rows again. Call stream(source(...)) or stream(ref(...)) in orders_mirror itself"
    ), error.value.msg


def test_begin_takes_the_offsets_of_the_targets_last_commit_of_this_consumer() -> None:
    mine = BuildCommit(CONSUMER, "b1", 4, (record("orders_mirror__orders", 4, offset=9),))
    other = BuildCommit("model.shop.other", "b2", 7, (record("x", 7),))
    build = begin(FakeSpark([other, mine]).run, build_for())
    assert build.last_txn_version == 4
    assert build.committed == mine.records
    assert build.registered == {"orders_mirror__orders": mine.records[0]}


def test_begin_after_a_dry_run_starts_the_streams_over() -> None:
    fresh = BuildCommit(CONSUMER, "b1", 2, (), fresh_target=True)
    build = begin(FakeSpark([fresh]).run, build_for())
    assert build.target_exists is False and build.recreates_streams
    assert build.last_txn_version == 2 and build.committed == ()


def test_begin_reads_nothing_for_a_new_target() -> None:
    spark = FakeSpark()
    begin(spark.run, build_for(exists=False))
    assert spark.statements == []


def test_finish_commits_the_offsets_with_the_write() -> None:
    spark = FakeSpark()
    env, registry, steps, writes = env_for(spark)
    read = record("orders_mirror__orders", 4, offset=9)
    build = build_for(
        last_txn_version=6,
        reads={read.name: (read, "sql")},
        source_writes=[("alter table src set tblproperties (x = 1)", "CDF on")],
        committed=(record("orders_mirror__orders", 6, offset=8),),
    )
    outcome = finish(env, CONSUMER, build, WRITE, {"spark.sql.files.maxRecordsPerFile": "3"})

    assert (
        outcome.message == "OK, consumed orders_mirror__orders: 4 inserted, 1 updated, 0 deleted"
    )
    assert outcome.counts == WriteCounts(inserted=4, updated=1, deleted=0)
    assert writes == ["alter table src set tblproperties (x = 1)"]
    assert steps.seen == ["during_write", "after_commit"]
    write_at = spark.statements.index(WRITE)
    confs = " ".join(spark.statements[:write_at])
    assert "`spark.databricks.delta.write.txnVersion`=`7`" in confs  # after the target's 6
    assert f"`spark.databricks.delta.write.txnAppId`=`dbt_spark_streams:{CONSUMER}`" in confs
    assert "`spark.sql.files.maxRecordsPerFile`=`3`" in confs
    assert all(s.startswith("RESET ") for s in spark.statements[write_at + 1 : write_at + 5])
    [landed] = spark.history
    assert landed.records == (replace(read, txn_version=7),)
    assert json.loads(landed.user_metadata())["dbt_spark_streams"]["consumer"] == CONSUMER
    registry.flush()
    [insert] = [s for s in spark.statements if s.startswith("insert into")]
    assert "'orders_mirror__orders'" in insert and ", 9, " in insert and ", 7, " in insert


def test_a_write_that_did_not_land_is_consumed_elsewhere_and_queues_nothing() -> None:
    spark = FakeSpark(lands=False)
    env, registry, steps, _ = env_for(spark)
    read = record("orders_mirror__orders", 4)
    build = build_for(reads={read.name: (read, "sql")})
    with pytest.raises(StreamConsumedElsewhere, match="is being consumed by another run"):
        finish(env, CONSUMER, build, WRITE, {})
    assert steps.seen == ["during_write"]
    assert not registry.has_queued()


def test_nothing_pending_writes_nothing_and_queues_the_committed_offsets() -> None:
    spark = FakeSpark()
    env, registry, steps, _ = env_for(spark)
    build = build_for(committed=(record("orders_mirror__orders", 3),))
    assert finish(env, CONSUMER, build, None, {}).message == "OK, no pending changes"
    assert spark.statements == [] and steps.seen == []
    assert registry.has_queued()


def test_a_dry_run_marks_the_target_it_creates_and_moves_no_offset() -> None:
    spark = FakeSpark()
    env, registry, steps, _ = env_for(spark)
    build = build_for(exists=False, dry_run="--empty", last_txn_version=2)
    outcome = finish(env, CONSUMER, build, WRITE, {})
    assert outcome.message == "OK, --empty: target created empty, nothing consumed"
    assert outcome.counts is None
    [marked] = spark.history
    assert marked.fresh_target and marked.records == () and marked.txn_version == 2
    assert marked.consumer == CONSUMER and len(marked.build_id) == 32  # a uuid4's hex
    assert steps.seen == [] and not registry.has_queued()


def test_a_model_without_streams_writes_with_its_confs_and_no_offsets() -> None:
    spark = FakeSpark()
    env, registry, steps, _ = env_for(spark)
    outcome = finish(env, CONSUMER, None, "insert into t select 1", {"spark.x": "1"})
    assert outcome.message == "OK" and outcome.counts is None
    assert spark.statements == ["SET `spark.x`=`1`", "insert into t select 1", "RESET spark.x"]
    assert steps.seen == [] and not registry.has_queued()
    stream_free = build_for()  # a build whose model read no stream
    assert finish(env, CONSUMER, stream_free, "insert into t select 2", {}).message == "OK"


def test_a_dry_run_with_nothing_to_create_writes_nothing() -> None:
    spark = FakeSpark()
    env, _, _, _ = env_for(spark)
    outcome = finish(env, CONSUMER, build_for(dry_run="--empty"), None, {})
    assert outcome.message == "OK, --empty: nothing consumed"
    assert spark.statements == []


class MergeSpark(FakeSpark):
    """A MERGE reports its metrics row, as Delta's MERGE does when it commits."""

    def run(self, sql: str) -> list[Row]:
        rows = super().run(sql)
        if sql == WRITE:
            return [{"num_affected_rows": 5, "num_inserted_rows": 2,
                     "num_updated_rows": 2, "num_deleted_rows": 1}]  # fmt: skip
        return rows


def test_a_merges_own_row_gives_the_counts_and_each_commit_is_its_own() -> None:
    spark = MergeSpark()
    env, _, _, writes = env_for(spark)
    reads = {
        name: (record(name, 2), "sql") for name in ("orders_mirror__orders", "orders_mirror__c")
    }
    build = build_for(reads=reads, source_writes=[("alter x", "why")])
    outcome = finish(env, CONSUMER, build, WRITE, {})
    assert outcome.message == (
        "OK, consumed orders_mirror__orders, orders_mirror__c: 2 inserted, 2 updated, 1 deleted"
    )
    assert not any(s.startswith("describe history") for s in spark.statements)
    first = spark.history[0]
    finish(env, CONSUMER, build_for(reads=reads), WRITE, {})
    assert spark.history[0].build_id != first.build_id
    assert writes == ["alter x"]


def test_a_writes_rows_per_file_are_capped_only_when_asked() -> None:
    assert write_confs(0) == {}
    assert write_confs(100_000) == {"spark.sql.files.maxRecordsPerFile": "100000"}
