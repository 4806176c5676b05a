"""Where a view column's values in a build's changes come from (a table reference's own
column, or the changed table's side of an equi-join), and their ranges from the change sets'
ranges, without reading the change set."""

from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition
from dbt.adapters.spark_streams.streams.views.lineage import column_ranges, column_source
from dbt.adapters.spark_streams.streams.views.pruning import equi_joins
from tests.unit.views.test_algebra import catalog, view_of


def test_a_plain_column_of_one_reference_has_a_source() -> None:
    view = view_of("join")  # o.id, o.amt * 2 as amt2, c.tier ... orders o join customers c
    assert column_source(view, "id") == (0, "id")
    assert column_source(view, "TIER") == (1, "tier")
    assert column_source(view, "amt2") is None  # an expression
    assert column_source(view, "nope") is None
    assert column_source(view_of("union_all"), "id") is None
    assert column_source(view_of("nested"), "id") == (0, "id")  # through the subquery


def ranges_of(asked: list[tuple[int, str]]):
    def ranges(position: int, column: str) -> list[Row]:
        asked.append((position, column))
        return [{"low": position * 10, "high": position * 10 + 1, "has_null": False}]

    return ranges


def test_each_changed_term_gives_its_values_through_its_own_column_or_the_join() -> None:
    """view "comma_join": select o.id, c.tier from orders o, customers c where o.cid = c.id;
    a column of customers (c.id = o.cid) in the term of orders comes from orders' cid."""
    view = view_of(
        "self_join"
    )  # select a.id, b.id as other from orders a join orders b on a.cid = b.cid
    asked: list[tuple[int, str]] = []
    integer = lambda position, column: "bigint"  # noqa: E731
    # `id` is a's own: the term of a gives a's ids; the term of b joins a on cid only
    assert column_ranges(view, equi_joins(view), "id", [0], ranges_of(asked), integer) == [
        {"low": 0, "high": 1, "has_null": False}
    ]
    assert column_ranges(view, equi_joins(view), "id", [0, 1], ranges_of(asked), integer) is None
    joined = view_of("join")  # o.cid = c.id: customers' id is orders' cid in orders' term
    asked.clear()
    rows = column_ranges(joined, equi_joins(joined), "tier", [0, 1], ranges_of(asked), integer)
    assert rows is None  # tier is not a join column: orders' term cannot tell it
    asked.clear()
    both = column_ranges(joined, equi_joins(joined), "id", [0, 1], ranges_of(asked), integer)
    assert both is None  # o.id: customers' term joins o on cid, not id
    text = lambda position, column: "string"  # noqa: E731
    assert column_ranges(joined, equi_joins(joined), "id", [0], ranges_of([]), text) is None


def test_a_join_column_takes_the_changed_tables_side_of_the_join() -> None:
    view = read_view_definition(
        catalog(
            "select o.id, o.cid, c.tier from orders o join customers c on o.cid = c.id",
            ("id", "cid", "tier"),
        ),
        "shop",
        "v",
        "s",
    )
    asked: list[tuple[int, str]] = []
    integer = lambda position, column: "bigint"  # noqa: E731
    rows = column_ranges(view, equi_joins(view), "cid", [0, 1], ranges_of(asked), integer)
    assert asked == [(0, "cid"), (1, "id")]  # orders' own cid; customers' id, joined to it
    assert rows == [
        {"low": 0, "high": 1, "has_null": False},
        {"low": 10, "high": 11, "has_null": False},
    ]
