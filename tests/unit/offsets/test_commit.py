"""The commit protocol's pieces (no JVM): the offsets as the target's userMetadata and back,
writes retried when they lost to a concurrent commit, and a lost race named as one."""

import json

import pytest

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild, plan
from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.errors import StreamConsumedElsewhere
from dbt.adapters.spark_streams.streams.offsets import commit as commit_module
from dbt.adapters.spark_streams.streams.offsets.commit import (
    BuildCommit,
    latest_commit_for,
    retry_on_conflict,
    run_with_commit,
    run_with_confs,
    sql_confs,
    verify_landed,
)
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from tests.unit.offsets.test_registry import record

NEVER = StreamRecord(**{**vars(record("customers", 2)), "last_consumed_on": None})
COMMIT = BuildCommit("model.shop.m", "build-1", 7, (record("orders", 7), NEVER))


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(commit_module.time, "sleep", slept.append)
    return slept


def test_the_offsets_travel_as_sorted_json_and_come_back_whole() -> None:
    text = COMMIT.user_metadata()
    body = json.loads(text)["dbt_spark_streams"]
    assert list(body) == sorted(body) and "fresh_target" not in body
    assert body["streams"][0]["offset_timestamp"] == "2026-11-21T12:00:00"
    assert body["streams"][1]["last_consumed_on"] is None
    assert BuildCommit.from_user_metadata(text) == COMMIT
    fresh = BuildCommit("model.shop.m", "build-2", 8, (), fresh_target=True)
    assert BuildCommit.from_user_metadata(fresh.user_metadata()) == fresh


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "not json",
        '{"other": 1}',
        "[1]",
        '{"dbt_spark_streams": 3}',
        '{"dbt_spark_streams": {"streams": [{"name": "x"}]}}',
    ],
)
def test_other_commits_are_not_stream_builds(text: str | None) -> None:
    assert BuildCommit.from_user_metadata(text) is None


class Flaky:
    """A write that fails `failures` times with `error`, then returns 'done'."""

    def __init__(self, failures: int, error: str) -> None:
        self.failures, self.error, self.calls = failures, error, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(self.error)
        return "done"


@pytest.mark.parametrize(
    "error",
    ["[DELTA_CONCURRENT_APPEND] ...", "ConcurrentAppendException", "[DELTA_METADATA_CHANGED]"],
)
def test_a_write_that_lost_to_a_concurrent_commit_is_retried(error, no_sleep) -> None:
    write = Flaky(2, error)
    assert retry_on_conflict(write) == "done"
    assert write.calls == 3 and no_sleep == [0.5, 1.0]


def test_a_write_is_tried_three_times_at_most() -> None:
    write = Flaky(3, "[DELTA_CONCURRENT_WRITE]")
    with pytest.raises(RuntimeError, match="DELTA_CONCURRENT_WRITE"):
        retry_on_conflict(write)
    assert write.calls == 3


def test_other_errors_are_not_retried() -> None:
    write = Flaky(1, "[DIVIDE_BY_ZERO]")
    with pytest.raises(RuntimeError, match="DIVIDE_BY_ZERO"):
        retry_on_conflict(write)
    assert write.calls == 1


def failing(error: str):
    def run(sql: str) -> list[dict]:
        if sql == "merge ...":
            raise RuntimeError(error)
        return []

    return sql_confs(run)


def test_a_write_that_lost_the_race_names_the_streams() -> None:
    with pytest.raises(StreamConsumedElsewhere) as raised:
        run_with_commit(
            failing("[DELTA_CONCURRENT_APPEND] Files were added\nat ..."), "merge ...", COMMIT
        )
    assert raised.value.msg == (
        "Stream orders, customers is being consumed by another run: this build's write did "
        "not land ([DELTA_CONCURRENT_APPEND] Files were added). Nothing was consumed by this "
        "run; run the model again to consume what is left."
    )
    with pytest.raises(RuntimeError, match="DELTA_METADATA_CHANGED") as other:
        run_with_commit(failing("[DELTA_METADATA_CHANGED]"), "merge ...", COMMIT)
    assert type(other.value) is RuntimeError  # passed on as it came, not as a lost race


def test_a_skipped_transaction_names_the_idempotency_pair() -> None:
    with pytest.raises(StreamConsumedElsewhere) as raised:
        verify_landed(lambda sql: [], "`shop`.`m`", COMMIT)
    assert (
        "(Delta skipped transaction 7 of dbt_spark_streams:model.shop.m on `shop`.`m`)"
        in raised.value.msg
    )


CONFIG = ConsumerConfig.from_model_config("m", {"unique_key": "id"})


def mirror_build(
    only_appends: bool, reads: bool = True, only_deletes: bool = False
) -> StreamBuild:
    build = StreamBuild("model.shop.m", "shop", "`shop`.`m`", True, False, True)
    build.only_appends = only_appends
    build.only_deletes = only_deletes
    if reads:
        build.reads["s"] = (record("s", 1), "select 1")
    return build


def test_a_mirror_of_sources_that_only_gained_rows_is_written_by_an_insert() -> None:
    assert plan(CONFIG, mirror_build(True), True, False).write_strategy == "append"
    assert plan(CONFIG, mirror_build(False), True, False).write_strategy == "apply_changes"
    assert plan(CONFIG, mirror_build(True, reads=False), True, False).write_strategy == (
        "apply_changes"
    )
    merge = ConsumerConfig.from_model_config(
        "m", {"unique_key": "id", "incremental_strategy": "merge"}
    )
    assert plan(merge, mirror_build(True), True, False).write_strategy == "merge"


def test_a_mirror_of_sources_that_only_lost_rows_merges_with_its_delete_clause_only() -> None:
    deleted = mirror_build(False, only_deletes=True)
    assert plan(CONFIG, deleted, True, False).write_strategy == "apply_deletes"
    assert plan(
        CONFIG, mirror_build(False, reads=False, only_deletes=True), True, False
    ).write_strategy == ("apply_changes")
    merge = ConsumerConfig.from_model_config(
        "m", {"unique_key": "id", "incremental_strategy": "merge"}
    )
    assert plan(merge, deleted, True, False).write_strategy == "merge"


class TargetHistory:
    """DESCRIBE HISTORY of a target, newest first, honouring `limit`; records each read."""

    def __init__(self, *user_metadata: str | None) -> None:
        self.rows = [{"userMetadata": text, "operationMetrics": {}} for text in user_metadata]
        self.reads: list[str] = []

    def __call__(self, sql: str) -> list[dict]:
        self.reads.append(sql)
        return self.rows[: int(sql.rsplit(" ", 1)[1])]


def test_the_newest_commit_is_read_alone_first() -> None:
    history = TargetHistory(COMMIT.user_metadata(), None)
    assert latest_commit_for(history, "`shop`.`m`", COMMIT.consumer) == COMMIT
    assert verify_landed(history, "`shop`.`m`", COMMIT) is not None
    assert history.reads == ["describe history `shop`.`m` limit 1"] * 2


def test_a_later_commit_of_another_writer_sends_the_search_deeper() -> None:
    history = TargetHistory(None, "not ours", COMMIT.user_metadata())  # e.g. OPTIMIZE, a user
    assert latest_commit_for(history, "`shop`.`m`", COMMIT.consumer) == COMMIT
    assert history.reads == [
        "describe history `shop`.`m` limit 1",
        "describe history `shop`.`m` limit 20",
    ]


def test_a_target_without_stream_builds_is_read_once_when_short() -> None:
    short, deep = TargetHistory(), TargetHistory(*[None] * 25)
    assert latest_commit_for(short, "`shop`.`m`", COMMIT.consumer) is None
    assert short.reads == ["describe history `shop`.`m` limit 1"]
    assert latest_commit_for(deep, "`shop`.`m`", COMMIT.consumer) is None
    assert deep.reads[-1] == "describe history `shop`.`m` limit 20"


class Recorder:
    """A RunSql that records statements and fails the one it is told to."""

    def __init__(self, failing: str = "") -> None:
        self.statements: list[str] = []
        self.failing = failing

    def __call__(self, sql: str) -> list[dict]:
        self.statements.append(sql)
        if sql == self.failing:
            raise RuntimeError("write failed")
        return []


CONFS = {"spark.databricks.delta.write.txnAppId": "a", "spark.sql.files.maxRecordsPerFile": "9"}
RESETS = ["RESET spark.databricks.delta.write.txnAppId", "RESET spark.sql.files.maxRecordsPerFile"]


def test_confs_are_set_before_and_reset_after_the_statement() -> None:
    run = Recorder()
    run_with_confs(run, "merge into t", CONFS)
    assert run.statements[:2] == [
        "SET `spark.databricks.delta.write.txnAppId`=`a`",
        "SET `spark.sql.files.maxRecordsPerFile`=`9`",
    ]
    assert run.statements[2:] == ["merge into t", *RESETS]


def test_confs_are_reset_when_the_statement_fails() -> None:
    run = Recorder(failing="merge into t")
    with pytest.raises(RuntimeError, match="write failed"):
        run_with_confs(run, "merge into t", CONFS)
    assert run.statements[-2:] == RESETS
