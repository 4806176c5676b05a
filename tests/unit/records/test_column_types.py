"""Reading DESCRIBE's type strings, and the canonical form netting compares where Spark cannot."""

import pytest

from dbt.adapters.spark_streams.streams.records.column_types import (
    ColumnType,
    canonical,
    comparable,
    parse_type,
    row_type,
    unordered,
)
from dbt.adapters.spark_streams.streams.records.netting import (
    ChangeRange,
    Snapshot,
    initial_rows_sql,
    net_changes_sql,
)

INT = ColumnType("int")
STRING = ColumnType("string")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("int", INT),
        ("decimal(12,3)", ColumnType("decimal(12,3)")),
        ("timestamp_ntz", ColumnType("timestamp_ntz")),
        ("array<int>", ColumnType("array", (("element", INT),))),
        ("map<string,int>", ColumnType("map", (("key", STRING), ("value", INT)))),
        ("struct<>", ColumnType("struct")),
        (
            "struct<a:decimal(5,2),b:array<variant>>",
            ColumnType(
                "struct",
                (
                    ("a", ColumnType("decimal(5,2)")),
                    ("b", ColumnType("array", (("element", ColumnType("variant")),))),
                ),
            ),
        ),
    ],
)
def test_parse_type(text: str, expected: ColumnType) -> None:
    assert parse_type(text) == expected


def test_field_names_with_separators_are_read_as_spark_writes_them() -> None:
    """DESCRIBE does not quote field names: `x:y`, `a,b`, `<p>` and a backtick stay raw."""
    parsed = parse_type(
        "struct<we ird:int,x:y:map<int,string>,a,b:array<variant>,q`t:int,<p>:string>"
    )
    assert [name for name, _ in parsed.fields] == ["we ird", "x:y", "a,b", "q`t", "<p>"]
    assert parsed.field("x:y") == ColumnType("map", (("key", INT), ("value", STRING)))


@pytest.mark.parametrize("text", ["", "map<string", "array<int>>", "interval day to second"])
def test_an_unreadable_type_is_opaque(text: str) -> None:
    """Opaque types compare as Spark compares them, as every type did before."""
    assert parse_type(text) == ColumnType(text)
    assert not unordered(parse_type(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("int", False),
        ("double", False),
        ("binary", False),
        ("array<struct<a:int>>", False),
        ("map<string,int>", True),
        ("variant", True),
        ("array<map<string,int>>", True),
        ("struct<a:int,b:struct<v:variant>>", True),
    ],
)
def test_unordered(text: str, expected: bool) -> None:
    assert unordered(parse_type(text)) is expected


@pytest.mark.parametrize("text", ["int", "string", "binary", "decimal(10,2)", "array<date>"])
def test_ordinary_types_are_their_own_canonical_form(text: str) -> None:
    assert canonical("`c`", parse_type(text)) == "`c`"
    assert comparable("`c`", parse_type(text)) == "`c`"


def test_canonical_forms() -> None:
    assert canonical("x", parse_type("double")) == "if(x = 0, abs(x), x)"
    assert canonical("x", parse_type("variant")) == "to_json(x)"
    assert canonical("x", parse_type("map<string,int>")) == (
        "array_sort(transform(map_entries(x), _canonical0 -> "
        "named_struct('key', _canonical0.key, 'value', _canonical0.value)))"
    )
    assert canonical("x", parse_type("struct<a:int,v:variant>")) == (
        "if(x is null, null, named_struct('a', x.`a`, 'v', to_json(x.`v`)))"
    )


def test_nested_lambdas_have_their_own_names() -> None:
    nested = canonical("x", parse_type("array<struct<m:map<string,array<variant>>>>"))
    assert "_canonical0 -> if(_canonical0 is null" in nested
    assert "transform(map_entries(_canonical0.`m`), _canonical1 ->" in nested
    assert "transform(_canonical1.value, _canonical2 -> to_json(_canonical2))" in nested


def test_floats_are_canonical_but_still_comparable_as_they_are() -> None:
    """Spark's `<=>` and GROUP BY already equate NaN with NaN and -0.0 with 0.0; only row
    ids (JSON) need -0.0 written as 0.0."""
    assert comparable("x", parse_type("array<double>")) == "x"
    assert canonical("x", parse_type("array<double>")) == (
        "transform(x, _canonical0 -> if(_canonical0 = 0, abs(_canonical0), _canonical0))"
    )


def test_row_type_matches_names_case_insensitively() -> None:
    row = row_type(("ID", "m"), ("int", "map<string,int>"), names=("id",))
    assert row == ColumnType("struct", (("id", INT),))
    assert row_type(("a",), ()) == ColumnType("struct", (("a", ColumnType("")),))


ORDINARY = ("id", "name", "fee"), ("int", "string", "decimal(10,2)")


@pytest.mark.parametrize("key", [("id",), ()])
def test_ordinary_tables_keep_the_fast_path(key: tuple[str, ...]) -> None:
    """Without maps, variants or floats the SQL is what it was before column types: with
    them unknown (no types) or known."""
    columns, types = ORDINARY
    typed = ChangeRange("t", columns, key, 1, 5, types)
    assert net_changes_sql(typed) == net_changes_sql(ChangeRange("t", columns, key, 1, 5))
    assert "_canonical" not in net_changes_sql(typed)
    assert "any_value" not in net_changes_sql(typed)
    if key:
        assert "not (_old <=> _new)" in net_changes_sql(typed)
    snapshot = Snapshot("t", columns, key, 3, "2026-01-01 00:00:00", types)
    assert initial_rows_sql(snapshot) == initial_rows_sql(
        Snapshot("t", columns, key, 3, "2026-01-01 00:00:00")
    )


def test_maps_take_the_canonical_path() -> None:
    change = ChangeRange("t", ("id", "m"), ("id",), 1, 5, ("int", "map<string,int>"))
    assert "not (if(_old is null, null, named_struct('id', _old.`id`, 'm', array_sort(" in (
        net_changes_sql(change)
    )
    keyless = net_changes_sql(ChangeRange("t", ("id", "v"), (), 1, 5, ("int", "variant")))
    assert "named_struct('id', `id`, 'v', to_json(`v`)) as _key" in keyless
    assert "any_value(named_struct('id', `id`, 'v', `v`)) as _row" in keyless
