"""What a stream's view may contain, checked on its parsed definition alone: a function
called by a qualified name is a user's, even when it shares a built-in's name, and the
definition's table references come in reading order."""

import sqlglot

from dbt.adapters.spark_streams.streams.views.rules import first_violation, table_references


def parsed(sql: str):
    return sqlglot.parse_one(sql, read="spark")


def builtin(name: str) -> bool:
    return name in {"upper", "abs"}


def test_a_qualified_function_is_user_defined_even_with_a_builtins_name() -> None:
    assert first_violation(parsed("select upper(name) from orders"), builtin) is None
    assert first_violation(parsed("select shop.upper(name) from orders"), builtin) == (
        "a user-defined function (upper)"
    )


def test_table_references_are_the_tables_in_reading_order() -> None:
    definition = parsed(
        "select a.id, c.tier from orders a join customers c on a.cid = c.id "
        "join shop.orders b on b.cid = c.id"
    )
    assert [table.sql() for table in table_references(definition)] == [
        "orders AS a",
        "customers AS c",
        "shop.orders AS b",
    ]


def violation(sql: str) -> str | None:
    return first_violation(parsed(sql), builtin)


def test_an_explicit_inner_join_is_a_join_a_view_may_use() -> None:
    assert violation("select o.id from orders o inner join customers c on o.cid = c.id") is None


def test_each_refused_construct_is_named_exactly() -> None:
    assert violation("select id from orders union select id from customers") == (
        "UNION without ALL"
    )
    assert violation("select stack(2, id, amt) from orders") == "a generator function (stack)"
    assert violation("select id from orders where id in (select id from customers)") == (
        "a subquery outside FROM (IN)"
    )
    assert violation("select (select max(id) from customers) as m from orders") == (
        "a subquery outside FROM (scalar subquery)"
    )
