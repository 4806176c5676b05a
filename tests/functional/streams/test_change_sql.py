"""The change-set SQL against real Delta tables: each DML statement below is one commit."""

import itertools
from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.streams.records.netting import (
    ChangeRange,
    Snapshot,
    append_only_sql,
    initial_rows_sql,
    net_changes_sql,
)

TABLE_NUMBERS = itertools.count()


@pytest.fixture
def table(spark: SparkSession) -> Iterator[str]:
    """A fresh Delta table `(id int, name string, fee int)` with Change Data Feed."""
    spark.sql("create schema if not exists change_sql")
    name = f"change_sql.t{next(TABLE_NUMBERS)}"
    spark.sql(
        f"create table {name} (id int, name string, fee int) using delta "
        "tblproperties (delta.enableChangeDataFeed = true)"
    )
    yield name
    spark.sql(f"drop table if exists {name}")


def latest_version(spark: SparkSession, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").collect()[0].version


def run(spark: SparkSession, *statements: str) -> None:
    for statement in statements:
        spark.sql(statement)


def net(spark: SparkSession, table: str, offset: int, key: tuple[str, ...] = ("id",)) -> list:
    """The standard stream's rows for changes after `offset`, sorted for comparison."""
    change = ChangeRange(
        table, ("id", "name", "fee"), key, offset + 1, latest_version(spark, table)
    )
    return rows(spark, net_changes_sql(change))


def rows(spark: SparkSession, sql: str) -> list:
    found = spark.sql(sql).collect()
    return sorted(
        (r.id, r.name, r.fee, r.metadata_action, r.metadata_isupdate, r.metadata_row_id)
        for r in found
    )


def test_insert_then_delete_nets_to_nothing(spark: SparkSession, table: str) -> None:
    offset = latest_version(spark, table)
    run(spark, f"insert into {table} values (1, 'a', 0)", f"delete from {table} where id = 1")
    assert net(spark, table, offset) == []


def test_insert_then_update_is_one_insert(spark: SparkSession, table: str) -> None:
    offset = latest_version(spark, table)
    run(spark, f"insert into {table} values (1, 'a', 0)", f"update {table} set fee = 5")
    [(id_, name, fee, action, isupdate, _)] = net(spark, table, offset)
    assert (id_, name, fee, action, isupdate) == (1, "a", 5, "INSERT", False)


def test_update_twice_is_one_pair_from_offset_value_to_current(
    spark: SparkSession, table: str
) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0), (2, 'b', 0)")
    offset = latest_version(spark, table)
    run(spark, f"update {table} set fee = 90 where id = 1", f"update {table} set fee = 105")
    changes = net(spark, table, offset)
    assert [c[:5] for c in changes] == [
        (1, "a", 0, "DELETE", True),
        (1, "a", 105, "INSERT", True),
        (2, "b", 0, "DELETE", True),
        (2, "b", 105, "INSERT", True),
    ]
    assert changes[0][5] == changes[1][5] != changes[2][5] == changes[3][5]


def test_update_then_delete_is_a_delete_of_the_offset_value(
    spark: SparkSession, table: str
) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0)")
    offset = latest_version(spark, table)
    run(spark, f"update {table} set fee = 7", f"delete from {table} where id = 1")
    assert [c[:5] for c in net(spark, table, offset)] == [(1, "a", 0, "DELETE", False)]


def test_delete_and_reinsert_in_separate_commits_is_an_update(
    spark: SparkSession, table: str
) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0)")
    offset = latest_version(spark, table)
    run(spark, f"delete from {table} where id = 1", f"insert into {table} values (1, 'z', 3)")
    assert [c[:5] for c in net(spark, table, offset)] == [
        (1, "a", 0, "DELETE", True),
        (1, "z", 3, "INSERT", True),
    ]


def test_delete_and_reinsert_in_one_commit_is_an_update(spark: SparkSession, table: str) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0), (2, 'b', 0)")
    offset = latest_version(spark, table)
    run(spark, f"insert overwrite {table} values (1, 'z', 3), (2, 'b', 0)")
    assert [c[:5] for c in net(spark, table, offset)] == [
        (1, "a", 0, "DELETE", True),
        (1, "z", 3, "INSERT", True),
    ]


def test_reinserting_the_same_values_nets_out(spark: SparkSession, table: str) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0)")
    offset = latest_version(spark, table)
    run(spark, f"delete from {table} where id = 1", f"insert into {table} values (1, 'a', 0)")
    assert net(spark, table, offset) == []


def test_no_op_update_nets_out(spark: SparkSession, table: str) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0), (2, null, null)")
    offset = latest_version(spark, table)
    run(spark, f"update {table} set fee = fee, name = name")
    assert net(spark, table, offset) == []


def test_null_key_is_one_identity(spark: SparkSession, table: str) -> None:
    run(spark, f"insert into {table} values (null, 'a', 0)")
    offset = latest_version(spark, table)
    run(spark, f"update {table} set fee = 1 where id is null")
    changes = net(spark, table, offset)
    assert [c[:5] for c in changes] == [
        (None, "a", 0, "DELETE", True),
        (None, "a", 1, "INSERT", True),
    ]
    assert changes[0][5] == changes[1][5]


def test_duplicate_rows_without_a_key_net_by_count(spark: SparkSession, table: str) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0), (1, 'a', 0), (2, 'b', 0)")
    offset = latest_version(spark, table)
    run(
        spark,
        f"insert into {table} values (1, 'a', 0), (3, 'c', 0)",
        f"delete from {table} where id = 2",
        f"insert into {table} values (3, 'c', 0)",
        f"delete from {table} where id = 3",
    )
    changes = net(spark, table, offset, key=())
    assert [c[:5] for c in changes] == [
        (1, "a", 0, "INSERT", False),
        (2, "b", 0, "DELETE", False),
    ]


def test_update_without_a_key_is_a_delete_and_an_insert(spark: SparkSession, table: str) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0), (1, 'a', 0)")
    offset = latest_version(spark, table)
    run(spark, f"update {table} set fee = 9")
    changes = net(spark, table, offset, key=())
    assert [c[:5] for c in changes] == [
        (1, "a", 0, "DELETE", False),
        (1, "a", 0, "DELETE", False),
        (1, "a", 9, "INSERT", False),
        (1, "a", 9, "INSERT", False),
    ]
    assert changes[0][5] != changes[1][5]
    assert changes[2][5] != changes[3][5]


def test_truncate_is_deletes_of_what_was_there(spark: SparkSession, table: str) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0), (2, 'b', 0)")
    offset = latest_version(spark, table)
    run(spark, f"delete from {table}")
    assert [c[:5] for c in net(spark, table, offset)] == [
        (1, "a", 0, "DELETE", False),
        (2, "b", 0, "DELETE", False),
    ]


def test_append_only_keeps_every_insert_as_inserted(spark: SparkSession, table: str) -> None:
    offset = latest_version(spark, table)
    run(
        spark,
        f"insert into {table} values (0, 'charlie brown', 0)",
        f"insert into {table} values (1, 'lucy', 0)",
        f"update {table} set name = 'sally' where id = 1",
        f"delete from {table} where id = 0",
    )
    change = ChangeRange(
        table, ("id", "name", "fee"), (), offset + 1, latest_version(spark, table)
    )
    assert [c[:5] for c in rows(spark, append_only_sql(change))] == [
        (0, "charlie brown", 0, "INSERT", False),
        (1, "lucy", 0, "INSERT", False),
    ]


def test_key_row_ids_match_across_modes_and_initial_rows(spark: SparkSession, table: str) -> None:
    run(spark, f"insert into {table} values (1, 'a', 0)")
    version = latest_version(spark, table)
    snapshot = Snapshot(table, ("id", "name", "fee"), ("id",), version, "2026-01-01 00:00:00")
    change = ChangeRange(table, ("id", "name", "fee"), ("id",), 1, version)
    [initial] = rows(spark, initial_rows_sql(snapshot))
    [appended] = rows(spark, append_only_sql(change))
    [netted] = net(spark, table, 0)
    assert initial == appended == netted == (1, "a", 0, "INSERT", False, initial[5])


# A struct whose field names hold DESCRIBE's separators (column mapping allows them), with a
# map and a variant inside: netting reads the type string and compares a canonical form.
ODD_STRUCT = "struct<`x:y`: map<int, string>, `a,b`: array<variant>, n: double>"


@pytest.fixture
def typed(spark: SparkSession) -> Iterator[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """A Delta table `(id int, m map<string,int>, s <ODD_STRUCT>)` with Change Data Feed;
    its name, column names and DESCRIBE types."""
    spark.sql("create schema if not exists change_sql")
    name = f"change_sql.t{next(TABLE_NUMBERS)}"
    spark.sql(
        f"create table {name} (id int, m map<string, int>, s {ODD_STRUCT}) using delta "
        "tblproperties (delta.enableChangeDataFeed = true, delta.columnMapping.mode = 'name')"
    )
    described = spark.sql(f"describe table {name}").collect()
    yield name, tuple(r.col_name for r in described), tuple(r.data_type for r in described)
    spark.sql(f"drop table if exists {name}")


def typed_net(spark: SparkSession, typed: tuple, offset: int, key: tuple[str, ...]) -> list:
    """(id, action, isupdate, row id, the row as JSON) of the standard stream, sorted."""
    table, columns, types = typed
    change = ChangeRange(table, columns, key, offset + 1, latest_version(spark, table), types)
    found = spark.sql(
        f"select id, metadata_action, metadata_isupdate, metadata_row_id, "
        f"to_json(named_struct('m', m, 's', s)) as row from ({net_changes_sql(change)})"
    ).collect()
    return sorted(tuple(r) for r in found)


def initial_ids(spark: SparkSession, typed: tuple, version: int) -> dict[int, str]:
    """The keyless row id of each row at `version`, as a new stream shows it."""
    table, columns, types = typed
    snapshot = Snapshot(table, columns, (), version, "2026-01-01 00:00:00", types)
    found = spark.sql(f"select id, metadata_row_id from ({initial_rows_sql(snapshot)})")
    return dict(tuple(r) for r in found.collect())


def test_maps_and_variants_net_on_their_entries(spark: SparkSession, typed: tuple) -> None:
    table = typed[0]
    variants = """array(parse_json('{"k": 1, "j": [1, 2]}'), null)"""
    run(
        spark,
        f"insert into {table} select id, map('a', 1, 'b', 2), "
        f"named_struct('x:y', map(1, 'p', 2, 'q'), 'a,b', {variants}, "
        "'n', if(id = 1, double('NaN'), -0.0D)) from values (1), (2) as v(id)",
    )
    offset = latest_version(spark, table)
    first_ids = initial_ids(spark, typed, offset)
    # The same entries in another order, NaN again and -0.0 as 0.0: no change.
    reordered = """array(parse_json('{"j": [1, 2], "k": 1}'), null)"""
    run(
        spark,
        f"update {table} set m = map('b', 2, 'a', 1), s = named_struct('x:y', "
        f"map(2, 'q', 1, 'p'), 'a,b', {reordered}, 'n', if(id = 1, s.n, 0.0D))",
    )
    assert typed_net(spark, typed, offset, ("id",)) == []
    assert typed_net(spark, typed, offset, ()) == []

    run(
        spark,
        f"update {table} set s = named_struct('x:y', map(1, 'p'), 'a,b', s.`a,b`, 'n', s.n) "
        "where id = 1",
        f"delete from {table} where id = 2",
    )
    keyed = typed_net(spark, typed, offset, ("id",))
    assert [r[:3] for r in keyed] == [
        (1, "DELETE", True),
        (1, "INSERT", True),
        (2, "DELETE", False),
    ]
    assert keyed[0][3] == keyed[1][3]
    assert '"x:y":{"1":"p"}' in keyed[1][4]
    keyless = typed_net(spark, typed, offset, ())
    assert [r[:3] for r in keyless] == [
        (1, "DELETE", False),
        (1, "INSERT", False),
        (2, "DELETE", False),
    ]
    # A row's keyless id is its value's: the same when the stream first showed it (maps in
    # another order, -0.0 where the delete reads 0.0, NaN).
    assert (keyless[0][3], keyless[2][3]) == (first_ids[1], first_ids[2])
    assert keyless[1][3] != first_ids[1]
