"""The decisions a build makes on a stream's pending range across schema changes, from its
history alone and the EXPLAIN probe (no JVM): what reads as is, what reads with Delta's check
off, what is refused together, and how each change is described. The same changes made on
real tables: tests/functional/streams/test_source_schema_change.py."""

import pytest

from dbt.adapters.spark_streams.streams.delta.schema_changes import (
    UNSAFE_READ,
    SchemaReads,
    check_schema_changes,
    describe_change,
)
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError

# The decisions on a pending range, from its history alone (and the EXPLAIN probe), without
# Spark. Commits are (version, operation, parameters); the stream's offset is version 2.
REFUSED_PLAN = [
    {"plan": "Error occurred during query planning: "},
    {"plan": "[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA] ..."},
]
READABLE_PLAN = [{"plan": "== Physical Plan == ... DeltaCDFRelation ..."}]
RENAME = ("RENAME COLUMN", {"oldColumnPath": "name", "newColumnPath": "full_name"})
WRITE = ("WRITE", {"mode": "Append", "partitionBy": "[]"})


def pending(*commits: tuple[str, dict], source: str = "`shop`.`members`") -> CommitsSinceOffset:
    rows = tuple(
        {"version": version, "operation": op, "operationParameters": parameters}
        for version, (op, parameters) in enumerate(commits, start=3)
    )
    return CommitsSinceOffset(source, 2, 2 + len(commits), rows)


class Probe:
    """A RunSql that answers the EXPLAIN probe with `plan` and counts the statements."""

    def __init__(self, plan: list[dict]):
        self.plan, self.statements = plan, []

    def __call__(self, statement: str) -> list[dict]:
        self.statements.append(statement)
        return self.plan


def decide(
    plan, *streams: CommitsSinceOffset, consuming: bool = True
) -> tuple[SchemaReads, Probe]:
    run, reads = Probe(plan), SchemaReads()
    for number, commits in enumerate(streams):
        check_schema_changes(run, reads, f"s{number}", commits, "model.shop.m", consuming)
    return reads, run


def test_ordinary_ranges_pay_nothing():
    """No schema change after the range's first commit (a change in it Delta reads as is):
    no probe, no conf."""
    reads, run = decide(REFUSED_PLAN, pending(RENAME, WRITE, ("MERGE", {}), ("DELETE", {})))
    assert run.statements == []
    assert reads.confs == {}


def test_a_rename_is_read_with_the_check_off():
    reads, run = decide(REFUSED_PLAN, pending(WRITE, RENAME, ("UPDATE", {})))
    assert run.statements == ["explain select * from table_changes('`shop`.`members`', 3, 5)"]
    assert reads.confs == {UNSAFE_READ: "true"}


def test_a_change_delta_reads_as_is_needs_nothing():
    """A comment change is a CHANGE COLUMN that Delta reads across with its check on."""
    comment = ("CHANGE COLUMN", {"column": '{"name":"fee","type":"integer","nullable":true}'})
    reads, run = decide(READABLE_PLAN, pending(WRITE, comment))
    assert len(run.statements) == 1
    assert reads.confs == {}


def test_a_plain_overwrite_does_not_block_the_check_off():
    overwrite = ("WRITE", {"mode": "Overwrite", "partitionBy": "[]"})
    reads, _ = decide(REFUSED_PLAN, pending(WRITE, RENAME, overwrite))
    assert reads.confs == {UNSAFE_READ: "true"}


def test_overwrite_schema_and_a_rename_are_refused_together():
    overwrite = ("WRITE", {"mode": "Overwrite", "canOverwriteSchema": "true"})
    with pytest.raises(StreamError) as refused:
        decide(REFUSED_PLAN, pending(WRITE, RENAME, overwrite))
    assert refused.value.msg == (
        "Stream s0: reading across version 4 of `shop`.`members`, which renamed column name to "
        "full_name, needs Delta's schema check off, and version 5 of `shop`.`members` overwrote "
        "the table and its schema (WRITE with overwriteSchema), which may have replaced its "
        "schema; with the check off such a change could be read wrongly, so the build reads "
        "neither. Nothing was read or written. Rebuild the consumer to start the stream again "
        "from the source's current rows: dbt run -s m --full-refresh"
    )


def test_the_check_off_for_one_stream_is_off_for_the_others():
    """One write reads every stream of the build: a RESTORE Delta reads as is on one source
    still rules out the check off that another source's rename needs."""
    restore = ("RESTORE", {"version": "1"})
    run, reads = Probe(REFUSED_PLAN), SchemaReads()
    check_schema_changes(run, reads, "s0", pending(WRITE, RENAME), "model.shop.m", True)
    run.plan = READABLE_PLAN
    other = pending(WRITE, restore, source="`shop`.`other`")
    with pytest.raises(StreamError) as refused:
        check_schema_changes(run, reads, "s1", other, "model.shop.m", True)
    assert refused.value.msg.startswith(
        "Stream s1: reading across version 4 of `shop`.`members`, which renamed column name to "
        "full_name, needs Delta's schema check off, and version 4 of `shop`.`other` restored an "
        "earlier version (RESTORE), which may have replaced its schema;"
    )
    assert reads.confs == {UNSAFE_READ: "true"}  # s0 alone, as before s1 was refused


def test_replace_columns_cannot_be_read_across():
    replaced = ("REPLACE COLUMNS", {"columns": "[]"})
    with pytest.raises(StreamError) as refused:
        decide(REFUSED_PLAN, pending(WRITE, replaced, WRITE))
    assert (
        "version 4 of `shop`.`members` replaced its columns (REPLACE COLUMNS), and Delta "
        "cannot read the stream's pending changes (versions 3 to 5) across that change."
        in (str(refused.value))
    )


@pytest.mark.parametrize(
    "commit, described",
    [
        (("DROP COLUMNS", {"columns": '["fee","note"]'}), "dropped columns fee, note"),
        (
            ("CHANGE COLUMN", {"column": '{"name":"fee","type":"long","nullable":true}'}),
            "changed column fee (now bigint)",
        ),
        (
            ("WRITE", {"mode": "Append", "canMergeSchema": "true"}),
            "evolved its schema in a write (WRITE with mergeSchema)",
        ),
    ],
)
def test_changes_are_described_from_their_history(commit, described):
    op, parameters = commit
    assert describe_change({"operation": op, "operationParameters": parameters}) == described
