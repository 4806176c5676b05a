"""A target's offsets past a CLONE (dbt clone) or a RESTORE: the consumer's newest stream commit
at or before the state that command copied, in that table's history (no JVM)."""

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.offsets.commit import BuildCommit, latest_commit_for
from dbt.adapters.spark_streams.streams.offsets.target_origin import (
    Origin,
    offsets_missing,
    origin_of,
    quote_table,
)
from dbt.adapters.spark_streams.streams.sql.run import Row
from tests.unit.offsets.test_registry import record

CONSUMER = "model.shop.orders_log"
DEV, PROD = "`dev`.`orders_log`", "`spark_catalog`.`prod`.`orders_log`"


def build(version: int, txn: int, consumer: str = CONSUMER) -> Row:
    """The history row of a stream build at the target's `version`; its record's offset is the
    same number, which tells the builds apart."""
    commit = BuildCommit(consumer, f"b{version}", txn, (record("orders", txn, offset=version),))
    return {"version": version, "operation": "MERGE", "userMetadata": commit.user_metadata()}


def clone(version: int, source: str = "spark_catalog.prod.orders_log", at: str = "3") -> Row:
    return {
        "version": version,
        "operation": "CLONE",
        "operationParameters": {"source": source, "sourceVersion": at},
    }


def restore(version: int, to: str | None, timestamp: str | None = None) -> Row:
    return {
        "version": version,
        "operation": "RESTORE",
        "operationParameters": {"version": to, "timestamp": timestamp},
    }


def other(version: int, operation: str = "OPTIMIZE") -> Row:
    return {"version": version, "operation": operation, "userMetadata": None}


class Histories:
    """DESCRIBE HISTORY of each table (newest first), with or without `limit n`."""

    def __init__(self, **tables: list[Row]) -> None:
        self.tables = {
            name: sorted(rows, key=lambda r: -r["version"]) for name, rows in tables.items()
        }
        self.statements: list[str] = []

    def run(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        rest = sql.removeprefix("describe history ")
        name, _, limit = rest.partition(" limit ")
        key = {DEV: "dev", PROD: "prod"}[name]
        rows = self.tables[key]
        return rows[: int(limit)] if limit else rows


def offsets(commit: BuildCommit | None) -> tuple[int, int] | None:
    """(which build: its target version, the txn version) of a found commit."""
    return None if commit is None else (commit.records[0].offset_version, commit.txn_version)


def test_a_target_built_since_its_clone_reads_its_own_newest_build() -> None:
    histories = Histories(dev=[clone(0), build(1, 4), other(2)])
    assert offsets(latest_commit_for(histories.run, DEV, CONSUMER)) == (1, 4)
    assert all("limit" in sql for sql in histories.statements)  # the recent commits only


def test_a_clone_takes_the_offsets_of_the_build_its_rows_came_from() -> None:
    # prod built at versions 1 to 3, then on at 5 after the clone (of version 3) was taken
    prod = [build(1, 1), build(2, 2), other(3, "OPTIMIZE"), build(4, 3), build(5, 4)]
    histories = Histories(dev=[clone(0, at="3")], prod=prod)
    assert offsets(latest_commit_for(histories.run, DEV, CONSUMER)) == (2, 2)


def test_a_clone_over_earlier_builds_of_the_target_ignores_them() -> None:
    """dbt clone --full-refresh over a clone that was built on: the new rows are prod's; the
    txn version stays above every one the target used, so Delta applies the next write."""
    dev = [build(1, 1), build(2, 9), other(3, "DELETE"), clone(4, at="1")]
    histories = Histories(dev=dev, prod=[build(0, 1), build(1, 2)])
    assert offsets(latest_commit_for(histories.run, DEV, CONSUMER)) == (1, 9)


def test_a_restore_takes_the_offsets_of_the_version_it_restored() -> None:
    dev = [build(1, 1), build(2, 2), other(3, "UPDATE"), build(4, 3), restore(5, "3")]
    histories = Histories(dev=dev)
    # the rows are version 3's, which the build at version 2 left; txn 3 was used since
    assert offsets(latest_commit_for(histories.run, DEV, CONSUMER)) == (2, 3)


def test_a_restore_of_a_clone_follows_both() -> None:
    dev = [clone(0, at="2"), build(1, 7), restore(2, "0")]
    histories = Histories(dev=dev, prod=[build(1, 1), build(2, 2), build(3, 3)])
    assert offsets(latest_commit_for(histories.run, DEV, CONSUMER)) == (2, 7)


@pytest.mark.parametrize(
    ("dev", "prod", "expected"),
    [
        ([restore(3, None, "2026-11-27 10:00:00")], [], "by a RESTORE to a timestamp (version 3)"),
        ([clone(0, at=None)], [], "by a CLONE that names no source version (version 0)"),  # type: ignore[arg-type]
        ([clone(0, at="1")], [build(1, 1, "model.shop.other")], "shows no stream build of"),
        (
            [clone(0, at="0")],
            [build(1, 1)],
            "holds the rows of `spark_catalog`.`prod`.`orders_log` at version 0",
        ),
    ],
)
def test_a_state_whose_offsets_cannot_be_told_is_an_error(
    dev: list[Row], prod: list[Row], expected: str
) -> None:
    with pytest.raises(StreamError) as error:
        latest_commit_for(Histories(dev=dev, prod=prod).run, DEV, CONSUMER)
    message = " ".join(str(error.value).split())
    assert expected in message and "--full-refresh" in message
    assert "Model orders_log: its target `dev`.`orders_log`" in message


def test_a_target_without_builds_or_copies_leaves_it_to_the_registry() -> None:
    assert latest_commit_for(Histories(dev=[other(0, "CREATE TABLE")]).run, DEV, CONSUMER) is None


def test_other_commits_are_no_origin() -> None:
    for operation in ("MERGE", "WRITE", "CREATE OR REPLACE TABLE AS SELECT", "OPTIMIZE"):
        assert origin_of({"operation": operation, "operationParameters": {}}, DEV, "m") is None
    assert quote_table("spark_catalog.prod.t") == "`spark_catalog`.`prod`.`t`"
    assert quote_table("delta.`/data/t`") == "delta.`/data/t`"


def test_a_full_refresh_takes_the_newest_build_whatever_came_after_it() -> None:
    """--full-refresh is what the errors ask for: it starts the streams over and only needs a
    txn version above the target's, so it looks past a copy whose offsets cannot be told."""
    histories = Histories(dev=[build(1, 6), restore(2, None, "2026-11-27 10:00:00")])
    found = latest_commit_for(histories.run, DEV, CONSUMER, follow_copies=False)
    assert offsets(found) == (1, 6)
    assert latest_commit_for(Histories(dev=[clone(0)]).run, DEV, CONSUMER, False) is None


@pytest.mark.parametrize(
    ("row", "origin"),
    [
        (clone(4, "spark_catalog.prod.t", "3"), Origin("`spark_catalog`.`prod`.`t`", 3, "CLONE")),
        (
            {"operation": "clone", "operationParameters": {"source": "p.t", "sourceVersion": 7}},
            Origin("`p`.`t`", 7, "CLONE"),
        ),
        (clone(4, "delta.`/w/t`", " 12 "), Origin("delta.`/w/t`", 12, "CLONE")),
        (restore(5, "2"), Origin(DEV, 2, "RESTORE")),
        (
            {"operation": "Restore", "operationParameters": {"version": 0}},
            Origin(DEV, 0, "RESTORE"),
        ),
    ],
)
def test_a_clone_or_restore_names_the_state_it_copied(row: Row, origin: Origin) -> None:
    assert origin_of(row, DEV, "orders_log") == origin


@pytest.mark.parametrize(
    ("row", "what"),
    [
        (clone(2, source="", at="3"), "a CLONE that names no source version (version 2)"),
        (clone(2, at="-1"), "a CLONE that names no source version (version 2)"),
        ({"version": 3, "operation": "CLONE"}, "a CLONE that names no source version (version 3)"),
        (restore(4, "v1"), "a RESTORE to a timestamp (version 4)"),
        ({"version": 5, "operation": "RESTORE", "operationParameters": None}, "a RESTORE to a "
         "timestamp (version 5)"),
    ],
)  # fmt: skip
def test_a_copy_whose_state_cannot_be_told_is_said_in_full(row: Row, what: str) -> None:
    with pytest.raises(StreamError) as error:
        origin_of(row, DEV, "orders_log")
    assert error.value.msg == (
        f"Model orders_log: its target {DEV} was rewritten by {what} since its last stream "
        "build, so the offsets its rows are at cannot be told. Rebuild it with --full-refresh "
        f"(its streams start over), or restore a version: RESTORE TABLE {DEV} TO VERSION AS OF "
        "<n>."
    )


def test_a_row_without_an_operation_is_no_origin() -> None:
    assert origin_of({"version": 1}, DEV, "m") is None
    assert origin_of({"operation": None, "operationParameters": None}, DEV, "m") is None
    assert quote_table("/data/t") == "/data/t"
    assert quote_table("prod.t") == "`prod`.`t`"
    assert quote_table("`prod`.`t`") == "`prod`.`t`"


def test_the_state_no_build_precedes_is_said_in_full() -> None:
    error = offsets_missing("orders_log", DEV, Origin(PROD, 4, "CLONE"))
    assert error.msg == (
        f"Model orders_log: its target {DEV} holds the rows of {PROD} at version 4 (CLONE), and "
        "that table's history shows no stream build of orders_log at or before that version (a "
        "build of another model, or history Delta has removed), so the offsets those rows are "
        "at cannot be told. Rebuild it with --full-refresh: its streams start over."
    )


def restores(count: int) -> list[Row]:
    """A build at version 0, then `count` restores each of the version before it."""
    return [build(0, 1), *(restore(version, str(version - 1)) for version in range(1, count + 1))]


def test_copies_are_followed_up_to_eight_hops() -> None:
    histories = Histories(dev=restores(8))
    assert offsets(latest_commit_for(histories.run, DEV, CONSUMER)) == (0, 1)
    with pytest.raises(StreamError) as error:
        latest_commit_for(Histories(dev=restores(9)).run, DEV, CONSUMER)
    assert str(error.value).endswith(
        "was cloned or restored more than 8 times over; rebuild it with --full-refresh."
    )
