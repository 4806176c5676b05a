"""Join-side pruning on joins the random property of test_pruning.py does not draw: which
equalities of a three-way join (beside subqueries, literals and a table's own columns) join
two table references, one ranges query per changed column, and a term's predicates combined
per other table, kept to integer columns and to tables worth pruning."""

from dbt.adapters.spark_streams.streams.records.key_ranges import MOST_RANGES
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.pruning import (
    ChangeRanges,
    EquiJoin,
    PruneInputs,
    equi_joins,
    term_prunes,
)
from tests.unit.views.test_algebra_cases import define

# orders a (0), customers c (1), orders b (2): c joins a on two columns, b on one
THREE_WAY = define(
    (
        "select a.id, c.tier from orders a join customers c on a.cid = c.id and a.id = c.tier "
        "join orders b on b.cid = c.id",
        ("id", "tier"),
    )
)
RANGES = {
    (1, "id"): [{"low": 1, "high": 3, "has_null": False}],
    (1, "tier"): [{"low": 7, "high": 9, "has_null": False}],
}
INTEGERS = {(0, "cid"): "bigint", (0, "id"): "bigint", (1, "id"): "int", (1, "tier"): "int",
            (2, "cid"): "bigint"}  # fmt: skip


def test_only_equalities_of_two_table_references_join_them() -> None:
    """The subquery s is read first; its columns, a literal and a's own columns join nothing."""
    view = define(
        (
            "select a.id, c.tier from (select id, cid from orders) s "
            "join orders a on a.id = s.id and s.cid = a.cid "
            "join customers c on a.amt > 2 and a.amt = 2 and a.cid = c.id where a.amt = a.cid",
            ("id", "tier"),
        )
    )
    assert equi_joins(view) == [EquiJoin(1, "cid", 2, "id"), EquiJoin(2, "id", 1, "cid")]


def test_a_branch_without_from_joins_nothing() -> None:
    view = define(("select id, tier from customers union all select 0, 0", ("id", "tier")))
    assert equi_joins(view) == []


def test_a_change_sets_ranges_are_asked_once_per_reference_and_column() -> None:
    asked: list[str] = []

    def answer(sql: str) -> list[Row]:
        asked.append(sql)
        return [{"low": len(asked), "high": len(asked), "has_null": False}]

    ranges = ChangeRanges(answer, lambda position: f"select * from changes_{position}")
    assert ranges(0, "cid") == ranges(0, "CID") == [{"low": 1, "high": 1, "has_null": False}]
    assert ranges(0, "id") == [{"low": 2, "high": 2, "has_null": False}]
    assert ranges(1, "cid") == [{"low": 3, "high": 3, "has_null": False}]
    assert len(asked) == 3
    assert "from (select * from changes_0)" in asked[0] and "`cid` as k" in asked[0]
    assert f"<= {MOST_RANGES}" in asked[0]  # at most MOST_RANGES ranges


def inputs(types: dict, worth=lambda position: True) -> PruneInputs:
    return PruneInputs(
        ranges=lambda position, column: RANGES[(position, column)],
        column_type=lambda position, column: types.get((position, column)),
        worth_pruning=worth,
    )


def test_two_joins_to_one_table_prune_its_scan_with_both_predicates() -> None:
    assert term_prunes(equi_joins(THREE_WAY), 1, inputs(INTEGERS)) == {
        0: "(`cid` between 1 and 3) and (`id` between 7 and 9)",
        2: "(`cid` between 1 and 3)",
    }


def test_a_table_not_worth_pruning_leaves_the_others_pruned() -> None:
    prunes = term_prunes(equi_joins(THREE_WAY), 1, inputs(INTEGERS, lambda p: p == 2))
    assert prunes == {2: "(`cid` between 1 and 3)"}


def test_a_join_on_a_column_that_is_not_an_integer_leaves_the_others_pruned() -> None:
    text = {**INTEGERS, (1, "tier"): "string"}
    assert term_prunes(equi_joins(THREE_WAY), 1, inputs(text)) == {
        0: "(`cid` between 1 and 3)",
        2: "(`cid` between 1 and 3)",
    }
    text = {**INTEGERS, (0, "id"): "string"}  # the other side's column
    assert term_prunes(equi_joins(THREE_WAY), 1, inputs(text))[0] == "(`cid` between 1 and 3)"
