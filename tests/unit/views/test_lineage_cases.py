"""Where a view column's values come from on shapes the other lineage tests do not draw: an
aliased column, a subquery read before a join, a column of a subquery's alias or of a select
that also joins (no certain source), and column types asked of the reference that owns the
column."""

from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.lineage import column_ranges, column_source
from dbt.adapters.spark_streams.streams.views.pruning import equi_joins
from tests.unit.views.test_algebra_cases import define


def test_an_aliased_plain_column_keeps_its_source() -> None:
    view = define(
        ("select o.id, c.tier as level from orders o join customers c on o.cid = c.id",
         ("id", "level"))
    )  # fmt: skip
    assert column_source(view, "level") == (1, "tier")


def test_a_column_of_the_join_after_a_subquery_is_the_joined_tables() -> None:
    view = define(
        ("select o.id, c.tier from (select id, cid from orders) o join customers c "
         "on o.cid = c.id", ("id", "tier"))
    )  # fmt: skip
    assert column_source(view, "tier") == (1, "tier")
    assert column_source(view, "id") is None  # o is a subquery: its table is not certain


def test_a_column_of_a_select_that_also_joins_has_no_certain_source() -> None:
    view = define(
        ("select amt, c.tier from (select o.amt, o.cid from orders o) s "
         "join customers c on s.cid = c.id", ("amt", "tier"))
    )  # fmt: skip
    assert column_source(view, "amt") is None


def test_column_types_are_asked_of_the_reference_and_column_the_values_come_from() -> None:
    """o.cid = c.id: the view's cid is orders' own in orders' term and customers' id in the
    term of customers; only those columns' types are known here."""
    view = define(
        ("select o.id, o.cid, c.tier from orders o join customers c on o.cid = c.id",
         ("id", "cid", "tier"))
    )  # fmt: skip
    types = {(0, "cid"): "bigint", (1, "id"): "int"}.get

    def ranges(position: int, column: str) -> list[Row]:
        return [{"low": position, "high": position, "has_null": False}]

    joins = equi_joins(view)
    rows = column_ranges(view, joins, "cid", [0, 1], ranges, lambda p, c: types((p, c)))
    assert rows == [
        {"low": 0, "high": 0, "has_null": False},
        {"low": 1, "high": 1, "has_null": False},
    ]
    strings = {(0, "cid"): "bigint", (1, "id"): "string"}.get
    assert column_ranges(view, joins, "cid", [0, 1], ranges, lambda p, c: strings((p, c))) is None


def test_an_unqualified_column_of_one_table_is_that_tables() -> None:
    view = define(
        ("select customer_id as k, amount from orders where amount > 0", ("k", "amount"))
    )
    assert column_source(view, "k") == (0, "customer_id")


def test_a_column_a_subquery_renamed_is_the_tables_column_it_names() -> None:
    """A materialized view's input reading `(select customer_id as id ... from orders)`: its
    `id` is orders' customer_id, not orders' own id."""
    view = define(
        ("select id as _mv_c0, amount as _mv_c1 from (select customer_id as id, amount "
         "from orders where amount > 0) s", ("_mv_c0", "_mv_c1"))
    )  # fmt: skip
    assert column_source(view, "_mv_c0") == (0, "customer_id")


def test_an_unqualified_column_of_a_select_that_joins_has_no_certain_source() -> None:
    view = define(
        ("select tier, o.id from orders o join customers c on o.cid = c.id", ("tier", "id"))
    )  # fmt: skip
    assert column_source(view, "tier") is None
