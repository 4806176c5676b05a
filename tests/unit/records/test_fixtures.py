"""A unit test's fixture rows as change records: the SQL's shape (its behaviour on Spark is
checked by tests/functional/streams/test_unit_tests.py)."""

from types import SimpleNamespace

from dbt.adapters.spark_streams.streams.records.fixtures import (
    fixture_change_records_sql,
    given_change_columns,
)
from dbt.adapters.spark_streams.unit_test_methods import UnitTestMethods, _fixture_columns

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
