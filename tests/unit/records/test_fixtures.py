"""A unit test's fixture rows read as change records: run on SQLite, each row an INSERT of a new
row with its row id unless it gives metadata itself; and which fixtures give metadata (their
behaviour on Spark is checked by tests/functional/streams/test_unit_tests.py)."""

from types import SimpleNamespace

from dbt.adapters.spark_streams.methods.unit_test_methods import UnitTestMethods, _fixture_columns
from dbt.adapters.spark_streams.streams.records.fixtures import (
    fixture_change_records_sql,
    fixture_system_time_sql,
    given_change_columns,
)
from tests.unit.records.spark_sqlite import run, sha1

CTE = "__dbt__cte__shop__items"


def test_rows_without_metadata_are_inserts_of_new_rows() -> None:
    sql = fixture_change_records_sql(CTE, (), ("id",))
    assert "'INSERT' as `metadata_action`" in sql
    assert "false as `metadata_isupdate`" in sql
    assert "sha1(to_json(named_struct('id', `id`)" in sql
    assert "cast(null as bigint) as `metadata_commit_version`" in sql
    assert "coalesce" not in sql and "struct(*)" in sql


def test_given_metadata_is_kept_where_a_row_has_it() -> None:
    sql = fixture_change_records_sql(CTE, ("METADATA_ACTION", "metadata_row_id"), ())
    assert "coalesce(`metadata_action`, 'INSERT') as `metadata_action`" in sql
    assert "coalesce(`metadata_row_id`, sha1(concat(" in sql
    assert "struct(* except (`metadata_action`, `metadata_row_id`))" in sql
    assert "false as `metadata_isupdate`" in sql
    assert given_change_columns(["ID", "Metadata_Action"]) == {"metadata_action"}


def definition(*given: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(model="mirror", given=list(given))


def test_the_fixture_behind_a_cte_says_which_metadata_it_has() -> None:
    dict_rows = SimpleNamespace(input="source('shop', 'items')", rows=[{"id": 1}, {"id": 2}])
    with_action = SimpleNamespace(
        input="source('shop', 'items')", rows=[{"id": 1, "metadata_action": "DELETE"}]
    )
    sql_rows = SimpleNamespace(
        input="ref('orders')", rows="select 1 as id, 'x' as metadata_row_id"
    )
    assert _fixture_columns(definition(dict_rows), CTE) == frozenset()
    assert len(_fixture_columns(definition(with_action), CTE)) == 5
    assert _fixture_columns(definition(sql_rows), "__dbt__cte__orders") == {"metadata_row_id"}
    this = SimpleNamespace(input="this", rows=[{"metadata_action": "DELETE"}])
    assert len(_fixture_columns(definition(this), "__dbt__cte__mirror")) == 5
    assert _fixture_columns(definition(dict_rows), "__dbt__cte__other") == frozenset()


def test_get_fixture_sql_adds_metadata_only_where_rows_give_it() -> None:
    add = UnitTestMethods.fixture_change_columns
    methods = UnitTestMethods.__new__(UnitTestMethods)
    assert add(methods, [{"id": 1}], ["id"]) == {}
    added = add(methods, [{"id": 1}, {"id": 2, "metadata_isupdate": True}], ["id"])
    assert added["metadata_isupdate"] == "boolean" and len(added) == 5
    assert add(methods, [{"metadata_action": "DELETE"}], ["metadata_action"]) == {}


def change_records(given: tuple[str, ...], key: tuple[str, ...], *rows: dict) -> list[tuple]:
    """The fixture `fx`'s change records, run on SQLite: its columns, then the metadata."""
    columns = ("id", "v", *given)
    sql = fixture_change_records_sql("fx", given, key)
    return sorted(tuple(row.values()) for row in run(sql, columns, fx=list(rows)))


def test_the_change_records_have_a_streams_columns() -> None:
    found = run(fixture_change_records_sql("fx", (), ()), ("id", "v"), fx=[{"id": 1, "v": "a"}])
    assert list(found[0]) == [
        "id",
        "v",
        "metadata_action",
        "metadata_isupdate",
        "metadata_row_id",
        "metadata_commit_version",
        "metadata_commit_timestamp",
    ]


def test_a_fixtures_rows_read_as_inserts_keyed_by_their_key() -> None:
    found = change_records((), ("id", "v"), {"id": 1, "v": "a"}, {"id": 2, "v": None})
    assert found == [
        (1, "a", "INSERT", 0, sha1('{"id":1,"v":"a"}'), None, None),
        (2, None, "INSERT", 0, sha1('{"id":2,"v":null}'), None, None),
    ]


def test_equal_keyless_rows_get_ids_by_their_occurrence() -> None:
    row = {"id": 1, "v": "a"}
    found = change_records((), (), row, row, {"id": 2, "v": "b"})
    value = '{"id":1,"v":"a"}'
    assert found == [
        (1, "a", "INSERT", 0, sha1(f"{value}#1"), None, None),
        (1, "a", "INSERT", 0, sha1(f"{value}#2"), None, None),
        (2, "b", "INSERT", 0, sha1('{"id":2,"v":"b"}#1'), None, None),
    ]


def test_the_metadata_a_row_gives_is_kept_and_the_rest_defaulted() -> None:
    given = ("metadata_action", "metadata_row_id", "metadata_commit_version")
    rows = (
        {"id": 1, "v": "a", "metadata_action": "DELETE", "metadata_commit_version": 3},
        {"id": 1, "v": "b", "metadata_row_id": "r1"},
    )
    # the row's JSON, which keyless row ids hash, leaves the given metadata out
    assert change_records(given, (), *rows) == [
        (1, "a", "DELETE", 0, sha1('{"id":1,"v":"a"}#1'), 3, None),
        (1, "b", "INSERT", 0, "r1", None, None),
    ]
    assert change_records(given, ("id",), *rows)[0][4] == sha1('{"id":1}')


def test_a_fixture_has_no_system_time_period() -> None:
    found = run(fixture_system_time_sql("fx"), ("id", "v"), fx=[{"id": 1, "v": "a"}])
    assert found == [{"id": 1, "v": "a", "_sys_start": None, "_sys_end": None}]
