"""Which queries a materialized view refreshes incrementally, and why the others refresh fully."""

import pytest

from dbt.adapters.spark_streams.streams.mv.refresh_sql import hidden_columns, input_sql
from dbt.adapters.spark_streams.streams.mv.shape import Aggregate, Full, Shape, query_shape


def shape_of(sql: str) -> Shape:
    shape = query_shape(sql)
    assert isinstance(shape, Shape), shape
    return shape


def test_a_mart_by_customer_is_group_keys_and_maintained_aggregates() -> None:
    shape = shape_of(
        """select c.id as customer_id, c.name, count(*) as orders, sum(o.amount) as revenue,
                  avg(o.amount) as average, max(o.ordered_at) as last_order
           from shop.orders o join shop.customers c on o.customer_id = c.id
           where o.status != 'cancelled'
           group by c.id, c.name"""
    )
    assert shape.columns == ("c.id", "c.name", "o.amount", "o.ordered_at")
    assert shape.keys == ("_mv_c0", "_mv_c1")
    assert [o.key for o in shape.outputs[:2]] == [0, 1]
    assert [o.aggregate for o in shape.outputs[2:]] == [
        Aggregate("count_star", None),
        Aggregate("sum", "_mv_c2"),
        Aggregate("avg", "_mv_c2"),
        Aggregate("max", "_mv_c3"),
    ]
    assert not shape.recompute_groups
    assert [name for name, _ in hidden_columns(shape)] == ["_mv_rows", "_mv_nn_0", "_mv_sum_0"]
    assert input_sql(shape) == (
        "select c.id as _mv_c0, c.name as _mv_c1, o.amount as _mv_c2, o.ordered_at as _mv_c3 "
        "FROM shop.orders AS o JOIN shop.customers AS c ON o.customer_id = c.id "
        "WHERE o.status <> 'cancelled'"
    )
    assert shape.query == (
        "SELECT _mv_c0 AS customer_id, _mv_c1, COUNT(*) AS orders, SUM(_mv_c2) AS revenue, "
        "AVG(_mv_c2) AS average, MAX(_mv_c3) AS last_order FROM _mv_input GROUP BY _mv_c0, _mv_c1"
    )


@pytest.mark.parametrize(
    "sql, keys",
    [
        ("select region as r, count(*) from t group by r", ("_mv_c0",)),  # by its alias
        ("select region, count(*) from t group by 1", ("_mv_c0",)),  # by its ordinal
        ("select distinct region, city from t", ("_mv_c0", "_mv_c1")),
        ("select upper(region), count(*) from t group by upper(region)", ("UPPER(_mv_c0)",)),
        ("select count(*), sum(x) from t", ()),  # a global aggregate: one group
    ],
)
def test_group_keys_as_written_by_alias_ordinal_distinct_or_none(sql: str, keys: tuple) -> None:
    assert shape_of(sql).keys == keys


@pytest.mark.parametrize(
    "sql",
    [
        "select g, count(distinct x) from t group by g",
        "select g, sum(x) / count(*) as ratio from t group by g",
        "select g, collect_set(x) from t group by g",
        "select g, sum(x) from t group by g having sum(x) > 10",
    ],
)
def test_what_the_change_alone_cannot_keep_recomputes_the_changed_groups(sql: str) -> None:
    assert shape_of(sql).recompute_groups


@pytest.mark.parametrize(
    "sql, reason, line",
    [
        ("select g, sum(x) over (partition by g) from t", "a window function", 1),
        ("select g, count(*) from t\ngroup by g\nlimit 10", "LIMIT", 3),
        ("select g, count(*) from t\ngroup by g\norder by g", "ORDER BY", 3),
        (
            "select g, count(*) from t a\nleft join (select * from u) b on a.k = b.k\ngroup by g",
            "an outer join of a subquery or a view's query (join tables)",
            2,
        ),
        (
            "select g, count(*) from t\nwhere x > rand()\ngroup by g",
            "a non-deterministic function (rand)",
            2,
        ),
        (
            "select g, h, count(*) from t group by g",
            "output h is neither a group key nor an aggregate",
            1,
        ),
        (
            "select count(*) from t group by g",
            "group key g is not a column of the result (add it)",
            1,
        ),
        ("select g, count(*) from t group by rollup (g)", "ROLLUP, CUBE or GROUPING SETS", 1),
        (
            "select a, b from t",
            "neither GROUP BY, DISTINCT nor an aggregate (a plain view: use a view stream)",
            None,
        ),
        (
            "select * from t where x > 0",  # not "a * ... of an aggregate": there is none
            "neither GROUP BY, DISTINCT nor an aggregate (a plain view: use a view stream)",
            None,
        ),
        (
            "select distinct * from t",
            "a * in the select list of an aggregate (name the columns)",
            1,
        ),
        (
            "with recursive r as (select 1 as g) select g, count(*) from r group by g",
            "a recursive WITH clause",
            1,
        ),
        (
            "select g, count(*) from t group by g union all select g, 1 from u",
            "its query is not a single SELECT (a set operation or a CTE)",
            1,
        ),
    ],
)
def test_anything_else_refreshes_fully_and_says_why_and_where(
    sql: str, reason: str, line: int | None
) -> None:
    full = query_shape(sql)
    assert full == Full(reason, line)
    assert full.sentence() == (f"{reason} at line {line}" if line else reason)


def test_a_user_defined_function_is_told_from_a_builtin_by_the_registry() -> None:
    builtin = {"upper"}.__contains__
    assert isinstance(
        query_shape("select upper(g), count(*) from t group by upper(g)", builtin), Shape
    )
    full = query_shape("select my_udf(g), count(*) from t group by my_udf(g)", builtin)
    assert isinstance(full, Full) and full.reason == "a user-defined function (my_udf)"


def test_an_outer_join_of_tables_is_followed_table_by_table() -> None:
    shape = shape_of(
        "select c.region, count(o.id) as orders from shop.customers c\n"
        "left join shop.orders o on o.customer_id = c.id group by c.region"
    )
    assert shape.tables == (("c", "shop", "customers"), ("o", "shop", "orders"))
    assert shape.keys == ("c.region",) and shape.recompute_groups
    assert shape.input_sql == ""


def test_a_with_clause_of_an_ephemeral_model_is_read_as_subqueries() -> None:
    """dbt puts an ephemeral model the query refs into a WITH clause of its own; its CTEs are
    the query's input as subqueries in FROM, each named where it was."""
    shape = shape_of(
        "with __dbt__cte__stg as (select id, cust, qty from shop.orders where qty > 0),\n"
        "big as (select * from __dbt__cte__stg where qty > 10)\n"
        "select s.cust, sum(s.qty) as q, count(*) as n from __dbt__cte__stg s\n"
        "join big on big.id = s.id group by s.cust"
    )
    assert shape.keys == ("_mv_c0",)
    assert "with" not in shape.input_sql.lower()
    assert shape.input_sql.lower().count("from shop.orders where qty > 0") == 2
