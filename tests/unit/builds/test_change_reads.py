"""Statements reading a build's change set beside its write run with the write's schema confs
(streams/builds/change_reads.py), and once more with Delta's check off where Delta refused the
range for a write that evolved the source's schema."""

from types import SimpleNamespace

import pytest

from dbt.adapters.spark_streams.streams.builds.change_reads import read_changes
from dbt.adapters.spark_streams.streams.delta.schema_changes import (
    UNSAFE_READ,
    SchemaRead,
    SchemaReads,
)

REFUSED = "[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA] Retrieving table changes failed"
APPEND = {"version": 6, "operation": "WRITE", "operationParameters": {"mode": "Append"}}
ALTER = {"version": 6, "operation": "CHANGE COLUMN", "operationParameters": {}}


class Session:
    """What ran, with which confs; a read of the range refused while the check is on."""

    def __init__(self, refuses: bool) -> None:
        self.refuses = refuses
        self.ran: list[tuple[str, dict]] = []

    def run(self, sql: str) -> list[dict]:
        if sql.startswith("explain"):  # the probe of the range (schema_changes.readable_as_is)
            return [{"plan": REFUSED if self.refuses else "== Physical Plan =="}]
        return self.run_with_confs(sql, {})

    def run_with_confs(self, sql: str, confs: dict) -> list[dict]:
        self.ran.append((sql, dict(confs)))
        if self.refuses and confs.get(UNSAFE_READ) != "true":
            raise RuntimeError(REFUSED)
        return [{"n": 1}]


def build_of(read: SchemaRead) -> SimpleNamespace:
    return SimpleNamespace(schema_reads=SchemaReads([read]), consumer="events_current")


def test_a_read_across_a_widened_column_runs_with_the_writes_confs() -> None:
    session = Session(refuses=True)
    read = SchemaRead("s", "`raw`.`events`", 5, 6, check_off=ALTER, commits=(ALTER,))
    rows = read_changes(
        session.run, session.run_with_confs, build_of(read), "insert 1", {"a": "b"}
    )
    assert rows == [{"n": 1}]
    assert session.ran == [("insert 1", {"a": "b", UNSAFE_READ: "true"})]


def test_a_range_a_write_evolved_is_read_again_with_the_check_off() -> None:
    session = Session(refuses=True)
    build = build_of(SchemaRead("s", "`raw`.`events`", 5, 6, commits=(APPEND,)))
    assert read_changes(session.run, session.run_with_confs, build, "insert 2") == [{"n": 1}]
    assert session.ran == [("insert 2", {}), ("insert 2", {UNSAFE_READ: "true"})]
    assert build.schema_reads.confs == {UNSAFE_READ: "true"}  # and so the write after it


def test_any_other_error_and_a_read_without_a_build_run_as_they_are() -> None:
    session = Session(refuses=False)
    assert read_changes(session.run, session.run_with_confs, None, "select 3") == [{"n": 1}]
    assert session.ran == [("select 3", {})]

    def failing(sql: str) -> list[dict]:
        raise RuntimeError("[TASK_WRITE_FAILED] disk full")

    build = build_of(SchemaRead("s", "`raw`.`events`", 5, 6, commits=(APPEND,)))
    with pytest.raises(RuntimeError, match="disk full"):
        read_changes(failing, session.run_with_confs, build, "insert 4")
    assert build.schema_reads.confs == {}  # nothing to read across
