"""The rows each stream read returns over a small change feed: netted to one change per key
(or per value without a key), every insert, every version, or the snapshot's rows, with their
actions, update flags, row ids and commits. The reads run on SQLite (spark_sqlite.py): no JVM.
"""

import pytest

from dbt.adapters.spark_streams.streams.records.netting import (
    VERSIONS,
    ChangeRange,
    Snapshot,
    append_only_sql,
    changes_between,
    empty_sql,
    initial_rows_sql,
    keyed_net_sql,
    keyed_value_net_sql,
    multiset_net_sql,
    net_changes_sql,
    versions_sql,
)
from tests.unit.records.spark_sqlite import key_id, run, sha1

COLUMNS = ("id", "v")
TYPES = ("int", "string")
KEYED = ChangeRange("`raw`.`t`", COLUMNS, ("id",), 2, 4, TYPES)
KEYLESS = ChangeRange("`raw`.`t`", COLUMNS, (), 2, 4, TYPES)


def feed(*changes: tuple[str, int, int, str]) -> list[dict]:
    """Change-feed rows (change type, version, id, v); a version's timestamp is t<version>."""
    return [
        {"id": i, "v": v, "_change_type": kind, "_commit_version": n, "_commit_timestamp": f"t{n}"}
        for kind, n, i, v in changes
    ]


def update(version: int, key: int, old: str, new: str) -> tuple[tuple, tuple]:
    return ("update_preimage", version, key, old), ("update_postimage", version, key, new)


def rows(sql: str, changes: list[dict], **tables: list[dict]) -> set[tuple]:
    """(action, id, v, isupdate, version, timestamp) of each row the read returns."""
    found = run(sql, COLUMNS, changes, **tables)
    result = [
        (
            r["metadata_action"],
            r["id"],
            r["v"],
            bool(r["metadata_isupdate"]),
            r["metadata_commit_version"],
            r["metadata_commit_timestamp"],
        )
        for r in found
    ]
    assert len(result) == len(set(result)), result
    return set(result)


def ids(sql: str, changes: list[dict], **tables: list[dict]) -> dict[tuple, str]:
    """Each returned row's id, by (action, id, v)."""
    found = run(sql, COLUMNS, changes, **tables)
    return {(r["metadata_action"], r["id"], r["v"]): r["metadata_row_id"] for r in found}


@pytest.mark.parametrize("read", [keyed_net_sql, net_changes_sql])
def test_a_key_nets_to_its_state_before_against_its_state_after(read) -> None:
    changes = feed(
        ("insert", 2, 1, "a"), *update(3, 1, "a", "b"),  # new key, then updated: one insert
        *update(2, 2, "x", "y"),  # an existing key updated: both halves
        ("delete", 3, 3, "gone"),  # an existing key deleted
        ("insert", 2, 4, "tmp"), ("delete", 4, 4, "tmp"),  # inserted, then deleted: nothing
        *update(2, 5, "p", "q"), *update(4, 5, "q", "p"),  # updated back: nothing
        ("delete", 3, 6, "old"), ("insert", 4, 6, "new"),  # deleted, then inserted again
    )  # fmt: skip
    assert rows(read(KEYED), changes) == {
        ("INSERT", 1, "b", False, 3, "t3"),
        ("DELETE", 2, "x", True, 2, "t2"),
        ("INSERT", 2, "y", True, 2, "t2"),
        ("DELETE", 3, "gone", False, 3, "t3"),
        ("DELETE", 6, "old", True, 4, "t4"),
        ("INSERT", 6, "new", True, 4, "t4"),
    }


def test_keyed_row_ids_hash_the_key_so_an_updates_halves_share_one() -> None:
    changes = feed(*update(2, 2, "x", "y"), ("insert", 3, 7, "n"))
    assert ids(keyed_net_sql(KEYED), changes) == {
        ("DELETE", 2, "x"): key_id(id=2),
        ("INSERT", 2, "y"): key_id(id=2),
        ("INSERT", 7, "n"): key_id(id=7),
    }


def test_only_the_changes_of_the_range_are_netted() -> None:
    changes = feed(("insert", 1, 1, "a"), *update(3, 1, "a", "b"), ("insert", 5, 2, "late"))
    assert rows(keyed_net_sql(KEYED), changes) == {
        ("DELETE", 1, "a", True, 3, "t3"),
        ("INSERT", 1, "b", True, 3, "t3"),
    }
    assert rows(multiset_net_sql(KEYLESS), changes) == {
        ("DELETE", 1, "a", False, 3, "t3"),
        ("INSERT", 1, "b", False, 3, "t3"),
    }


def test_a_delete_and_insert_of_a_key_in_one_commit_is_an_update() -> None:
    """Before-images sort first within a commit, whatever order the feed has."""
    changes = feed(("insert", 3, 1, "new"), ("delete", 3, 1, "old"))
    assert rows(keyed_net_sql(KEYED), changes) == {
        ("DELETE", 1, "old", True, 3, "t3"),
        ("INSERT", 1, "new", True, 3, "t3"),
    }
    same = feed(("insert", 3, 1, "a"), ("delete", 3, 1, "a"))
    assert rows(keyed_net_sql(KEYED), same) == set()


def test_keyless_rows_net_by_value_and_count() -> None:
    changes = feed(
        ("insert", 2, 1, "a"), ("insert", 2, 1, "a"), ("insert", 3, 1, "a"),
        ("delete", 4, 1, "a"),  # three in, one out: two inserts of the value
        *update(2, 2, "x", "y"),  # a delete of one value and an insert of another
        ("insert", 2, 3, "tmp"), ("delete", 3, 3, "tmp"),  # nets out
        ("delete", 3, 4, "d"), ("delete", 4, 4, "d"),  # two deletes of one value
    )  # fmt: skip
    found = run(multiset_net_sql(KEYLESS), COLUMNS, changes)
    assert sorted(
        (
            r["metadata_action"],
            r["id"],
            r["v"],
            r["metadata_isupdate"],
            r["metadata_commit_version"],
        )
        for r in found
    ) == [
        ("DELETE", 2, "x", 0, 2),
        ("DELETE", 4, "d", 0, 4),
        ("DELETE", 4, "d", 0, 4),
        ("INSERT", 1, "a", 0, 4),
        ("INSERT", 1, "a", 0, 4),
        ("INSERT", 2, "y", 0, 2),
    ]
    a_ids = {r["metadata_row_id"] for r in found if r["v"] == "a"}
    assert a_ids == {sha1('{"id":1,"v":"a"}#1'), sha1('{"id":1,"v":"a"}#2')}


def test_history_reads_every_version_but_updates_that_changed_nothing() -> None:
    changes = feed(
        ("insert", 2, 1, "a"), *update(3, 1, "a", "b"), *update(4, 1, "b", "b"),
        ("delete", 4, 2, "x"),
    )  # fmt: skip
    assert rows(versions_sql(KEYED), changes) == {
        ("INSERT", 1, "a", False, 2, "t2"),
        ("INSERT", 1, "b", True, 3, "t3"),
        ("DELETE", 2, "x", False, 4, "t4"),
    }


def test_history_deletes_the_old_key_of_an_update_that_changed_it() -> None:
    changes = feed(("update_preimage", 3, 1, "a"), ("update_postimage", 3, 9, "a"))
    assert rows(versions_sql(KEYED), changes) == {
        ("DELETE", 1, "a", False, 3, "t3"),
        ("INSERT", 9, "a", True, 3, "t3"),
    }


def test_history_row_ids_tell_each_version_of_a_value_apart() -> None:
    changes = feed(("insert", 2, 1, "a"), ("insert", 2, 1, "a"), ("delete", 3, 1, "a"))
    found = run(versions_sql(KEYLESS), COLUMNS, changes)
    value = '{"id":1,"v":"a"}'
    assert sorted(r["metadata_row_id"] for r in found) == sorted(
        [sha1(f"{value}#2#insert#1"), sha1(f"{value}#2#insert#2"), sha1(f"{value}#3#delete#1")]
    )


def test_append_only_reads_every_insert_as_inserted() -> None:
    changes = feed(
        ("insert", 2, 1, "a"), *update(3, 1, "a", "b"), ("delete", 4, 1, "b"),
        ("insert", 3, 2, "x"), ("insert", 3, 2, "x"), ("insert", 5, 3, "late"),
    )  # fmt: skip
    keyed = run(append_only_sql(KEYED), COLUMNS, changes)
    assert sorted(tuple(r.values()) for r in keyed) == [  # the columns, then the metadata
        (1, "a", "INSERT", 0, key_id(id=1), 2, "t2"),
        (2, "x", "INSERT", 0, key_id(id=2), 3, "t3"),
        (2, "x", "INSERT", 0, key_id(id=2), 3, "t3"),
    ]
    keyless = run(append_only_sql(KEYLESS), COLUMNS, changes)
    assert sorted(r["metadata_row_id"] for r in keyless) == sorted(
        [
            sha1('{"id":1,"v":"a"}#2#1'),
            sha1('{"id":2,"v":"x"}#3#1'),
            sha1('{"id":2,"v":"x"}#3#2'),
        ]
    )


SNAPSHOT = Snapshot("`raw`.`t`", COLUMNS, ("id",), 6, "2026-11-25 09:00:00", TYPES)
AT_6 = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]


def test_a_new_stream_reads_the_snapshots_rows_as_inserts() -> None:
    assert rows(initial_rows_sql(SNAPSHOT), [], snapshot_6=AT_6) == {
        ("INSERT", 1, "a", False, 6, "2026-11-25 09:00:00"),
        ("INSERT", 2, "b", False, 6, "2026-11-25 09:00:00"),
    }
    assert ids(initial_rows_sql(SNAPSHOT), [], snapshot_6=AT_6)[("INSERT", 2, "b")] == key_id(id=2)
    keyless = Snapshot("`raw`.`t`", COLUMNS, (), 6, "t6", TYPES)
    twice = run(initial_rows_sql(keyless), COLUMNS, snapshot_6=[AT_6[0], AT_6[0]])
    assert sorted(r["metadata_row_id"] for r in twice) == sorted(
        [sha1('{"id":1,"v":"a"}#1'), sha1('{"id":1,"v":"a"}#2')]
    )
    assert run(empty_sql(SNAPSHOT), COLUMNS, snapshot_6=AT_6) == []


def test_a_view_snapshot_reads_its_relation() -> None:
    view = Snapshot("v", COLUMNS, (), 3, "t3", TYPES, relation="select * from snapshot_6")
    assert rows(initial_rows_sql(view), [], snapshot_6=AT_6[:1]) == {
        ("INSERT", 1, "a", False, 3, "t3")
    }


CHANGES = feed(("insert", 2, 1, "a"), *update(3, 1, "a", "b"), ("delete", 4, 2, "x"))


@pytest.mark.parametrize(
    ("mode", "first", "expected"),
    [
        ("standard", 2, {("INSERT", 1, "b", False, 3, "t3"), ("DELETE", 2, "x", False, 4, "t4")}),
        ("standard", 3, {("DELETE", 1, "a", True, 3, "t3"), ("INSERT", 1, "b", True, 3, "t3"),
                         ("DELETE", 2, "x", False, 4, "t4")}),
        ("append_only", 2, {("INSERT", 1, "a", False, 2, "t2")}),
        (VERSIONS, 3, {("INSERT", 1, "b", True, 3, "t3"), ("DELETE", 2, "x", False, 4, "t4")}),
        ("standard", 4, {("DELETE", 2, "x", False, 4, "t4")}),
        ("standard", 5, set()),
        (VERSIONS, 5, set()),
    ],
)  # fmt: skip
def test_changes_between_reads_the_mode_up_to_the_snapshot(
    mode: str, first: int, expected: set
) -> None:
    snapshot = Snapshot("`raw`.`t`", COLUMNS, ("id",), 4, "t4", TYPES)
    assert rows(changes_between(mode, snapshot, first), CHANGES, snapshot_4=AT_6) == expected


def test_changes_between_nets_keyless_sources_by_value() -> None:
    snapshot = Snapshot("`raw`.`t`", COLUMNS, (), 4, "t4", TYPES)
    assert rows(changes_between("standard", snapshot, 3), CHANGES) == {
        ("DELETE", 1, "a", False, 3, "t3"),
        ("INSERT", 1, "b", False, 3, "t3"),
        ("DELETE", 2, "x", False, 4, "t4"),
    }


VIEW = ChangeRange("v", COLUMNS, ("id",), 2, 4, TYPES, feed="select * from changes")


def test_a_views_changes_net_by_value_then_pair_by_key() -> None:
    """A view's terms may cancel in any order: an insert before its own delete nets out."""
    changes = feed(
        ("insert", 3, 1, "b"), ("delete", 3, 1, "a"),  # an update, halves in any order
        ("insert", 2, 2, "x"), ("delete", 2, 2, "x"),  # cancels
        ("insert", 4, 3, "n"),
        ("delete", 2, 4, "d"),
    )  # fmt: skip
    assert rows(net_changes_sql(VIEW), changes) == {
        ("DELETE", 1, "a", True, 3, "t3"),
        ("INSERT", 1, "b", True, 3, "t3"),
        ("INSERT", 3, "n", False, 4, "t4"),
        ("DELETE", 4, "d", False, 2, "t2"),
    }
    assert ids(keyed_value_net_sql(VIEW), changes)[("DELETE", 1, "a")] == key_id(id=1)


@pytest.mark.parametrize(
    "changes",
    [
        feed(("insert", 3, 1, "b"), ("insert", 3, 1, "c")),  # two rows added for a key
        feed(("delete", 3, 1, "b"), ("delete", 3, 1, "c")),  # two removed
        feed(("insert", 3, 1, "b"), ("insert", 4, 1, "b")),  # one value twice
    ],
)
def test_a_view_key_with_two_rows_fails_naming_the_source(changes: list[dict]) -> None:
    with pytest.raises(RuntimeError) as failed:
        run(keyed_value_net_sql(VIEW), COLUMNS, changes)
    assert str(failed.value) == (
        "unique_key (id) is not unique in v: a key has two rows in the view. Name columns that "
        "are unique in the view, or no unique_key."
    )


def test_a_keyless_history_deletes_the_old_value_of_an_update() -> None:
    changes = feed(*update(3, 1, "a", "b"), *update(4, 1, "b", "b"))
    assert rows(versions_sql(KEYLESS), changes) == {
        ("DELETE", 1, "a", False, 3, "t3"),
        ("INSERT", 1, "b", True, 3, "t3"),
    }


def test_a_key_of_two_columns_nets_on_both() -> None:
    both = ChangeRange("`raw`.`t`", COLUMNS, ("id", "v"), 2, 4, TYPES)
    changes = feed(*update(3, 1, "a", "b"), ("insert", 3, 1, "c"), ("delete", 4, 1, "c"))
    assert rows(keyed_net_sql(both), changes) == {
        ("DELETE", 1, "a", False, 3, "t3"),
        ("INSERT", 1, "b", False, 3, "t3"),
    }
    assert ids(keyed_net_sql(both), changes)[("INSERT", 1, "b")] == key_id(id=1, v="b")
    view = ChangeRange("v", COLUMNS, ("id", "v"), 2, 4, TYPES, feed="select * from changes")
    with pytest.raises(RuntimeError, match=r"^unique_key \(id, v\) is not unique in v: a key"):
        run(keyed_value_net_sql(view), COLUMNS, feed(("insert", 3, 1, "b"), ("insert", 4, 1, "b")))
