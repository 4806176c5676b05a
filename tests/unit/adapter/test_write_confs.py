"""The confs of a build's write are set around its one statement only, even when it fails."""

import pytest

from dbt.adapters.spark_streams.streams.offsets.commit import run_with_confs


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
