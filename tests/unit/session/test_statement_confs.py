"""A build's write confs through the session's conf API: set around the statement only, and
what a key held before is put back, also when the statement fails."""

import pytest

from dbt.adapters.spark_streams.session.statement_confs import session_confs


class FakeConf:
    """The part of pyspark's RuntimeConfig the adapter uses, over a dict."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = dict(values)

    def get(self, key: str, default: str | None) -> str | None:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


class FakeSession:
    def __init__(self, values: dict[str, str]) -> None:
        self.conf = FakeConf(values)


USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
MAX_RECORDS = "spark.sql.files.maxRecordsPerFile"
CONFS = {USER_METADATA: '{"offsets": 1}', MAX_RECORDS: "100000"}


def test_the_statement_sees_the_confs_and_the_session_gets_its_own_back() -> None:
    session = FakeSession({MAX_RECORDS: "7", "spark.sql.ansi.enabled": "true"})
    seen: list[dict[str, str]] = []

    def run(sql: str) -> list[dict]:
        seen.append(dict(session.conf.values))
        return [{"statement": sql}]

    rows = session_confs(session, run)("merge into t", CONFS)  # type: ignore[arg-type]
    assert rows == [{"statement": "merge into t"}]
    assert seen == [{**CONFS, "spark.sql.ansi.enabled": "true"}]
    assert session.conf.values == {MAX_RECORDS: "7", "spark.sql.ansi.enabled": "true"}


def test_a_failed_statement_leaves_no_conf_behind() -> None:
    session = FakeSession({})

    def run(sql: str) -> list[dict]:
        raise RuntimeError("write failed")

    with pytest.raises(RuntimeError, match="write failed"):
        session_confs(session, run)("merge into t", CONFS)  # type: ignore[arg-type]
    assert session.conf.values == {}
