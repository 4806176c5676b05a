"""How a build reads a stream's pending range across schema changes (no JVM): as is, with
Delta's check off for its own write, or not at all, from the range's history and an EXPLAIN
probe; each refusal names the commit, the change and the fix."""

import json

import pytest

from dbt.adapters.spark_streams.streams.delta.schema_changes import (
    UNSAFE_READ,
    SchemaRead,
    SchemaReads,
    check_schema_changes,
    describe_change,
    may_have_evolved_silently,
    model_name,
    schema_read,
)
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row

CONSUMER = "model.shop.orders_mirror"
REFUSED_PLAN = "[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE] ..."


def commit(version: int, operation: str = "WRITE", **parameters: object) -> Row:
    return {"version": version, "operation": operation, "operationParameters": parameters}


RENAME = commit(6, "RENAME COLUMN", oldColumnPath="amount", newColumnPath="total")
REPLACE = commit(7, "REPLACE COLUMNS")


def pending(*later: Row, source: str = "`raw`.`orders`") -> CommitsSinceOffset:
    """Versions 5.. after offset 4: a plain write first, then `later`."""
    commits = (commit(5), *later)
    return CommitsSinceOffset(source, 4, int(commits[-1]["version"]), commits)


class Probe:
    """EXPLAIN of a change read: refused by Delta's check when `refuses`."""

    def __init__(self, refuses: bool = True, fails: bool = False) -> None:
        self.refuses, self.fails = refuses, fails
        self.asked: list[str] = []

    def __call__(self, sql: str) -> list[Row]:
        self.asked.append(sql)
        if self.fails:
            raise RuntimeError("the metastore is away")
        return [{"plan": REFUSED_PLAN if self.refuses else "== Physical Plan == ..."}]


def test_a_range_without_schema_changes_is_not_probed() -> None:
    probe = Probe()
    read = schema_read(probe, "s", pending(commit(6)), CONSUMER)
    assert (read.check_off, read.replacing) == (None, None)
    assert (read.start, read.end) == (5, 6)
    assert probe.asked == []


def test_a_change_in_the_first_commit_reads_as_is() -> None:
    first = CommitsSinceOffset("`raw`.`orders`", 4, 5, ({**RENAME, "version": 5},))
    assert schema_read(Probe(), "s", first, CONSUMER).check_off is None


def test_a_rename_delta_refuses_turns_the_check_off_for_the_write() -> None:
    probe = Probe()
    reads = SchemaReads()
    check_schema_changes(probe, reads, "s", pending(RENAME), CONSUMER, consuming=True)
    assert probe.asked == ["explain select * from table_changes('`raw`.`orders`', 5, 6)"]
    assert reads.reads[0].check_off == RENAME
    assert reads.confs == {UNSAFE_READ: "true"}


@pytest.mark.parametrize("probe", [Probe(refuses=False), Probe(fails=True)])
def test_a_range_delta_reads_or_a_failed_probe_keeps_the_check_on(probe: Probe) -> None:
    reads = SchemaReads()
    check_schema_changes(probe, reads, "s", pending(RENAME), CONSUMER, consuming=True)
    assert reads.reads[0].check_off is None and reads.confs == {}


@pytest.mark.parametrize(
    "change",
    [
        commit(6, "DROP COLUMNS", columns='["note"]'),
        commit(6, "CHANGE COLUMN", column='{"name": "id", "type": "long"}'),
        commit(6, "CHANGE COLUMNS", columns="[]"),
        commit(6, "WRITE", canMergeSchema="true"),
        commit(6, "MERGE", canMergeSchema="TRUE"),
    ],
)
def test_changes_whose_old_files_read_in_the_new_schema(change: Row) -> None:
    assert schema_read(Probe(), "s", pending(change), CONSUMER).check_off == change


def test_a_replaced_schema_that_delta_refuses_fails_the_build() -> None:
    with pytest.raises(StreamError) as raised:
        schema_read(Probe(), "orders_mirror__orders", pending(REPLACE), CONSUMER)
    assert raised.value.msg == (
        "Stream orders_mirror__orders: version 7 of `raw`.`orders` replaced its columns "
        "(REPLACE COLUMNS), and Delta cannot read the stream's pending changes (versions 5 to "
        "7) across that change. Nothing was read or written. Rebuild the consumer to start the "
        "stream again from the source's current rows: dbt run -s orders_mirror "
        "--full-refresh"
    )


def test_a_replaced_schema_delta_reads_is_read_with_the_check_on() -> None:
    read = schema_read(Probe(refuses=False), "s", pending(REPLACE), CONSUMER)
    assert (read.check_off, read.replacing) == (None, REPLACE)


def test_a_rename_and_a_replace_in_one_range_are_never_read_with_the_check_off() -> None:
    reads = SchemaReads()
    with pytest.raises(StreamError) as raised:
        check_schema_changes(Probe(), reads, "s", pending(RENAME, REPLACE), CONSUMER, True)
    assert raised.value.msg == (
        "Stream s: reading across version 6 of `raw`.`orders`, which renamed column amount to "
        "total, needs Delta's schema check off, and version 7 of `raw`.`orders` replaced its "
        "columns (REPLACE COLUMNS), which may have replaced its schema; with the check off "
        "such a change could be read wrongly, so the build reads neither. Nothing was read or "
        "written. Rebuild the consumer to start the stream again from the source's current "
        "rows: dbt run -s orders_mirror --full-refresh"
    )
    assert reads.reads == []


def test_the_check_off_for_one_stream_is_off_for_every_stream_of_the_write() -> None:
    reads = SchemaReads()
    customers = pending(commit(6, "WRITE", canOverwriteSchema="true"), source="`raw`.`c`")
    check_schema_changes(Probe(refuses=False), reads, "c", customers, CONSUMER, True)
    with pytest.raises(StreamError, match="which may have replaced its schema"):
        check_schema_changes(Probe(), reads, "o", pending(RENAME), CONSUMER, True)
    assert [read.stream for read in reads.reads] == ["c"]


def test_a_peek_that_needs_the_check_off_names_the_consumer_to_build() -> None:
    with pytest.raises(StreamError) as raised:
        check_schema_changes(Probe(), SchemaReads(), "s", pending(RENAME), CONSUMER, False)
    assert raised.value.msg == (
        "Stream s: its pending changes (versions 5 to 6 of `raw`.`orders`) cross version 6, "
        "which renamed column amount to total. Delta reads changes across that only with a "
        "setting the consumer's build applies to its own write, so a peek cannot read them. "
        "Build the consumer first: dbt run -s orders_mirror"
    )


@pytest.mark.parametrize(
    ("change", "described"),
    [
        (commit(1, "DROP COLUMNS", columns=json.dumps(["a"])), "dropped column a"),
        (commit(1, "DROP COLUMNS", columns=json.dumps(["a", "b"])), "dropped columns a, b"),
        (commit(1, "DROP COLUMNS", columns="not json"), "dropped columns "),
        (commit(1, "CHANGE COLUMNS", columns="not json"), "changed columns "),
        (
            commit(1, "CHANGE COLUMN", column=json.dumps({"name": "id", "type": "long"})),
            "changed column id (now bigint)",
        ),
        (
            commit(
                1,
                "CHANGE COLUMNS",
                columns=json.dumps(
                    [
                        {"name": "a", "type": "integer"},
                        {"name": "s", "type": {"type": "struct"}},
                        "x",
                    ]
                ),
            ),
            "changed columns a (now int), s (now a complex type), x",
        ),
        (commit(1, "REMOVE COLUMN MAPPING"), "turned column mapping off (REMOVE COLUMN MAPPING)"),
        (commit(1, "RESTORE"), "restored an earlier version (RESTORE)"),
        (
            commit(1, "CREATE OR REPLACE TABLE AS SELECT", canOverwriteSchema="true"),
            "overwrote the table and its schema (CREATE OR REPLACE TABLE AS SELECT with "
            "overwriteSchema)",
        ),
        (
            commit(1, "WRITE", canMergeSchema="true"),
            "evolved its schema in a write (WRITE with mergeSchema)",
        ),
        (commit(1, "UPDATE SCHEMA"), "changed its schema (UPDATE SCHEMA)"),
    ],
)
def test_each_change_is_described_for_a_person(change: Row, described: str) -> None:
    assert describe_change(change) == described


MERGE = commit(6, "MERGE", predicate='["(id = id)"]')
WRITE_REFUSED = "[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA] Retrieving table changes ..."


def test_a_refused_write_is_read_across_a_merge_that_evolved_the_schema() -> None:
    """No history trace, so no probe before the write; after Delta's refusal, a refused range
    that a MERGE explains turns the check off for the second try."""
    probe, reads = Probe(), SchemaReads()
    check_schema_changes(probe, reads, "s", pending(MERGE, commit(7, "DELETE")), CONSUMER, True)
    assert probe.asked == [] and reads.confs == {}
    assert reads.read_across_evolution(probe, WRITE_REFUSED, CONSUMER)
    assert reads.reads[0].check_off == MERGE
    assert reads.confs == {UNSAFE_READ: "true"}
    assert describe_change(MERGE) == "evolved its schema in a MERGE (schema auto-merge)"


def test_other_write_failures_are_left_to_the_caller() -> None:
    reads = SchemaReads()
    check_schema_changes(Probe(), reads, "s", pending(MERGE), CONSUMER, True)
    assert not reads.read_across_evolution(Probe(), "[DELTA_CONCURRENT_APPEND] ...", CONSUMER)
    assert not reads.read_across_evolution(Probe(refuses=False), WRITE_REFUSED, CONSUMER)
    only_deletes = SchemaReads()
    check_schema_changes(Probe(), only_deletes, "s", pending(commit(6, "DELETE")), CONSUMER, True)
    assert not only_deletes.read_across_evolution(Probe(), WRITE_REFUSED, CONSUMER)
    assert reads.confs == {} and only_deletes.confs == {}


def test_a_merge_and_a_replaced_schema_in_one_range_are_refused() -> None:
    reads = SchemaReads()
    overwrite = commit(7, "WRITE", canOverwriteSchema="true")
    probe = Probe(refuses=False)  # Delta reads the overwrite with its check on
    check_schema_changes(probe, reads, "s", pending(MERGE, overwrite), CONSUMER, True)
    with pytest.raises(StreamError, match=r"version 6 of `raw`\.`orders`, which evolved its"):
        reads.read_across_evolution(Probe(), WRITE_REFUSED, CONSUMER)


def test_a_new_stream_that_cannot_read_across_is_told_to_start_later() -> None:
    """A full refresh would start it at its at= point again: the fix is a later point."""
    with pytest.raises(StreamError) as refused:
        check_schema_changes(
            Probe(), SchemaReads(), "s", pending(REPLACE), CONSUMER, True, started=True
        )
    assert refused.value.msg.endswith(
        "Nothing was read or written. Start the stream at or after that version, e.g. "
        "at={'version': 7}, or without at= / before= (the source's current rows)."
    )
    with pytest.raises(StreamError, match=r"a peek cannot read them\. Start it at or after"):
        check_schema_changes(Probe(), SchemaReads(), "s", pending(RENAME), "", False, started=True)


def test_a_type_without_a_sql_spelling_is_said_as_delta_names_it() -> None:
    change = commit(1, "CHANGE COLUMN", column=json.dumps({"name": "note", "type": "string"}))
    assert describe_change(change) == "changed column note (now string)"


def test_a_peek_of_a_new_stream_across_a_change_is_said_in_full() -> None:
    with pytest.raises(StreamError) as raised:
        check_schema_changes(Probe(), SchemaReads(), "s", pending(RENAME), CONSUMER, False, True)
    assert raised.value.msg == (
        "Stream s: its changes from its start point (versions 5 to 6 of `raw`.`orders`) cross "
        "version 6, which renamed column amount to total. Delta reads changes across that only "
        "in a consumer's build, so a peek cannot read them. Start it at or after that version, "
        "e.g. at={'version': 6}."
    )


def test_a_write_that_failed_with_the_check_already_off_is_left_to_the_caller() -> None:
    reads = SchemaReads()
    check_schema_changes(Probe(), reads, "s", pending(RENAME, MERGE), CONSUMER, True)
    assert reads.confs == {UNSAFE_READ: "true"}
    assert not reads.read_across_evolution(Probe(), WRITE_REFUSED, CONSUMER)
    assert reads.reads[0].check_off == RENAME


def test_only_the_refused_range_is_read_across_its_evolution() -> None:
    reads = SchemaReads()
    check_schema_changes(Probe(), reads, "c", pending(commit(6)), CONSUMER, True)
    check_schema_changes(Probe(), reads, "o", pending(MERGE, source="`raw`.`o`"), CONSUMER, True)

    def probe(sql: str) -> list[Row]:  # Delta reads the customers' range, refuses the orders'
        plan = REFUSED_PLAN if "`raw`.`o`" in sql else "== Physical Plan =="
        return [{"plan": "== Analyzed =="}, {"plan": plan}]

    assert reads.read_across_evolution(probe, WRITE_REFUSED, CONSUMER)
    assert [read.check_off for read in reads.reads] == [None, MERGE]


def test_a_probe_that_fails_with_deltas_refusal_is_a_refusal() -> None:
    def probe(sql: str) -> list[Row]:
        raise RuntimeError(REFUSED_PLAN)

    assert schema_read(probe, "s", pending(RENAME), CONSUMER).check_off == RENAME


@pytest.mark.parametrize(
    ("later", "evolved"),
    [
        (commit(6, "MERGE"), True),
        (commit(6, "STREAMING UPDATE"), True),
        (commit(6, "write"), True),
        (commit(6, "DELETE"), False),
        (commit(6, "WRITE", canOverwriteSchema="true"), False),
    ],
)
def test_which_writes_may_have_evolved_a_schema_without_a_trace(later: Row, evolved: bool) -> None:
    read = SchemaRead("s", "`raw`.`orders`", 5, 6, commits=(later,))
    assert may_have_evolved_silently(read) is evolved
    replaced = SchemaRead("s", "`raw`.`orders`", 5, 6, replacing=REPLACE, commits=(later,))
    assert not may_have_evolved_silently(replaced)


@pytest.mark.parametrize("operation", ["REMOVE COLUMN MAPPING", "UPDATE SCHEMA", "RESTORE"])
def test_commits_that_may_replace_a_schema(operation: str) -> None:
    read = schema_read(Probe(refuses=False), "s", pending(commit(6, operation)), CONSUMER)
    assert read.replacing == commit(6, operation) and read.check_off is None


def test_what_a_history_entry_leaves_out_is_said_as_missing() -> None:
    assert model_name("model.shop.orders.v2") == "orders.v2"
    dropped = commit(1, "DROP COLUMNS")  # no columns parameter
    assert describe_change(dropped) == "dropped columns "
    assert (
        describe_change(commit(1, "CHANGE COLUMN")) == "changed column None (now a complex type)"
    )


def test_a_new_stream_across_a_rename_and_a_replace_is_told_to_start_after_the_replace() -> None:
    with pytest.raises(StreamError) as raised:
        check_schema_changes(
            Probe(), SchemaReads(), "s", pending(RENAME, REPLACE), CONSUMER, True, started=True
        )
    assert raised.value.msg.startswith("Stream s: reading across version 6 of `raw`.`orders`")
    assert raised.value.msg.endswith("e.g. at={'version': 7}, or without at= / before= (the "
                                     "source's current rows).")  # fmt: skip


def test_a_merge_read_across_with_a_replace_names_its_stream() -> None:
    reads = SchemaReads()
    overwrite = commit(7, "WRITE", canOverwriteSchema="true")
    check_schema_changes(Probe(False), reads, "orders", pending(MERGE, overwrite), CONSUMER, True)
    with pytest.raises(StreamError) as raised:
        reads.read_across_evolution(Probe(), WRITE_REFUSED, CONSUMER)
    assert raised.value.msg.startswith("Stream orders: reading across version 6 of `raw`.")


def test_a_stream_that_cannot_read_across_a_replace_names_its_consumer() -> None:
    with pytest.raises(StreamError) as refused:
        check_schema_changes(Probe(), SchemaReads(), "s", pending(REPLACE), CONSUMER, True)
    assert refused.value.msg.endswith("dbt run -s orders_mirror --full-refresh")
