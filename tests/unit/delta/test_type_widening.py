"""Which type changes a stream target follows in place, and the sentence for each one it
cannot (no JVM)."""

import pytest

from dbt.adapters.spark_streams.streams.delta.type_widening import (
    SqlType,
    TypeChange,
    cannot_follow,
    type_changes,
    widen_target,
    widenings,
    widens,
)
from dbt.adapters.spark_streams.streams.errors import StreamError


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("tinyint", "smallint"), ("byte", "int"), ("smallint", "bigint"), ("int", "bigint"),
        ("int", "double"), ("tinyint", "decimal(3,0)"), ("int", "decimal(10,0)"),
        ("int", "decimal(12,2)"), ("bigint", "decimal(20,0)"), ("float", "double"),
        ("decimal(10,2)", "decimal(12,2)"), ("decimal(10,1)", "decimal(12,3)"),
        ("decimal(10,2)", "decimal(11,2)"), ("decimal(10,2)", "decimal(11,3)"),
        ("date", "timestamp_ntz"), ("INT", "BIGINT"),
    ],
)  # fmt: skip
def test_the_widenings_delta_applies_in_place(old: str, new: str) -> None:
    assert widens(SqlType.parse(old), SqlType.parse(new))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("bigint", "int"), ("int", "int"), ("bigint", "double"), ("int", "decimal(9,0)"),
        ("int", "decimal(11,2)"), ("double", "float"), ("decimal(12,2)", "decimal(10,2)"),
        ("decimal(10,2)", "decimal(11,4)"), ("decimal(10,2)", "decimal(12,1)"),
        ("int", "string"), ("string", "int"), ("date", "timestamp"), ("timestamp", "date"),
        ("struct<a:int>", "struct<a:bigint>"),
    ],
)  # fmt: skip
def test_changes_that_are_no_widening(old: str, new: str) -> None:
    assert not widens(SqlType.parse(old), SqlType.parse(new))


def test_types_are_read_as_describe_spells_them() -> None:
    assert SqlType.parse(" Decimal( 12 , 2 ) ") == SqlType("decimal", 12, 2)
    assert SqlType.parse("decimal") == SqlType("decimal", 10, 0)
    assert str(SqlType.parse("long")) == "bigint"


def test_only_the_kept_columns_whose_type_differs_count() -> None:
    changes = type_changes(
        ["id", "V", "gone", "Added"],
        {"id": "int", "v": "bigint", "added": "string", "metadata_action": "string"},
        {"ID": "int", "v": "int", "gone": "string"},
    )
    assert [str(change) for change in changes] == ["V: int -> bigint"]


def change(old: str, new: str, column: str = "v") -> TypeChange:
    return TypeChange(column, SqlType.parse(old), SqlType.parse(new))


def test_a_widening_is_applied_where_the_target_has_type_widening() -> None:
    plan = widenings("m", "s.m", [change("int", "bigint")], "ignore", widening_enabled=True)
    assert plan.apply == [change("int", "bigint")] and plan.blocked == []
    assert plan.apply[0].alter("`s`.`m`") == "alter table `s`.`m` alter column `v` type bigint"


def test_a_target_without_type_widening_writes_what_fits_and_names_the_alter() -> None:
    plan = widenings("m", "s.m", [change("int", "bigint")], "sync_all_columns", False)
    assert plan.apply == [] and plan.blocked == [change("int", "bigint")]
    said = cannot_follow("m", "`s`.`m`", plan.blocked)
    assert said.startswith("Model m: column v (int -> bigint) widened in its source")
    assert (
        "Run ALTER TABLE `s`.`m` SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')" in said
    )
    assert said.endswith("or rebuild the target with `dbt run --full-refresh -s m`.")


def test_on_schema_change_fail_refuses_a_widening() -> None:
    with pytest.raises(StreamError, match="on_schema_change 'fail' stops the build"):
        widenings("m", "s.m", [change("int", "bigint")], "fail", widening_enabled=True)


@pytest.mark.parametrize("setting", ["ignore", "append_new_columns", "sync_all_columns", "fail"])
def test_any_other_type_change_is_refused_whatever_on_schema_change_says(setting: str) -> None:
    changes = [change("int", "bigint", "w"), change("bigint", "string")]
    with pytest.raises(StreamError) as refused:
        widenings("m", "s.m", changes, setting, widening_enabled=True)
    said = str(refused.value)
    assert "Model m: the type of column v (bigint -> string) changed between" in said
    assert f"(on_schema_change '{setting}')" in said
    assert "`dbt run --full-refresh -s m`" in said and "(`cast(`v` as bigint)`)" in said
    for harmful in ("try_cast", "LEGACY", "storeAssignmentPolicy"):
        assert harmful not in said


def test_the_target_is_read_and_altered_only_when_a_type_changed() -> None:
    asked: list[str] = []

    def run(sql: str) -> list[dict]:
        asked.append(sql)
        return [{"key": "delta.enableTypeWidening", "value": "true"}] if "show" in sql else []

    plan = widen_target(run, "m", "t", [], "ignore")
    assert (plan.apply, plan.blocked, asked) == ([], [], [])
    widen_target(run, "m", "t", [change("int", "bigint")], "ignore")
    assert asked == ["show tblproperties t", "alter table t alter column `v` type bigint"]


@pytest.mark.parametrize(
    ("old", "new", "widened"),
    [
        ("tinyint", "decimal(2,0)", False), ("smallint", "decimal(5,0)", True),
        ("smallint", "decimal(4,0)", False), ("bigint", "decimal(19,0)", False),
        ("tinyint", "double", True), ("smallint", "double", True), ("int", "float", False),
        ("short", "integer", True), ("integer", "short", False), ("tinyint", "tinyint", False),
        ("float", "decimal(10,2)", False), ("date", "timestamp_ntz", True),
        ("timestamp_ntz", "date", False), ("double", "double", False),
        ("decimal(10,2)", "decimal(10,2)", False), ("decimal(10,2)", "decimal(12,4)", True),
        ("decimal(10,2)", "bigint", False), ("string", "double", False),
    ],
)  # fmt: skip
def test_widening_boundaries(old: str, new: str, widened: bool) -> None:
    assert widens(SqlType.parse(old), SqlType.parse(new)) is widened


@pytest.mark.parametrize(
    ("spelled", "parsed"),
    [
        ("numeric(5,1)", SqlType("decimal", 5, 1)), ("DEC(7)", SqlType("decimal", 7, 0)),
        ("decimal(12)", SqlType("decimal", 12, 0)), ("short", SqlType("smallint")),
        ("Integer", SqlType("int")), ("byte", SqlType("tinyint")),
        ("timestamp  ntz", SqlType("timestamp ntz")), ("String", SqlType("string")),
    ],
)  # fmt: skip
def test_each_spelling_of_a_type_reads_as_one(spelled: str, parsed: SqlType) -> None:
    assert SqlType.parse(spelled) == parsed


def test_a_type_is_said_as_spark_spells_it() -> None:
    assert str(SqlType.parse("numeric(5, 1)")) == "decimal(5,1)"
    assert str(change("int", "decimal(12,2)", "Amount")) == "Amount: int -> decimal(12,2)"
    widened = change("decimal(10,2)", "decimal(12,2)", "a`b")
    assert widened.alter("t") == "alter table t alter column `a``b` type decimal(12,2)"


def test_a_column_in_another_spelling_of_its_type_did_not_change() -> None:
    found = type_changes(["a", "b"], {"a": "long", "B": "Decimal(10,0)"}, {"a": "bigint"})
    assert found == []
    found = type_changes(["a", "b"], {"a": "bigint", "b": "int"}, {"A": "int", "b": "INT"})
    assert found == [change("int", "bigint", "a")]


def test_no_change_is_no_plan_whatever_on_schema_change_says() -> None:
    for enabled in (True, False):
        plan = widenings("m", "s.m", [], "fail", widening_enabled=enabled)
        assert (plan.apply, plan.blocked) == ([], [])


def test_on_schema_change_fail_names_every_widened_column() -> None:
    widened = [change("int", "bigint", "a"), change("float", "double", "b")]
    with pytest.raises(StreamError) as refused:
        widenings("m", "s.m", widened, "fail", widening_enabled=False)
    assert refused.value.msg == (
        "Model m: columns a (int -> bigint), b (float -> double) widened in its source, and "
        "on_schema_change 'fail' stops the build before it writes: nothing was written and no "
        "offset moved. With any other on_schema_change the build widens the target's column as "
        "the source did; or rebuild the target with `dbt run --full-refresh -s m`."
    )


def test_a_change_that_is_no_widening_is_said_in_full() -> None:
    with pytest.raises(StreamError) as refused:
        widenings("m", "`s`.`m`", [change("bigint", "int", "n")], "ignore", False)
    assert refused.value.msg == (
        "Model m: the type of column n (bigint -> int) changed between its target `s`.`m` and "
        "the model's output, and Delta cannot change the target's column to it in place "
        "(on_schema_change 'ignore'): writing would cast every value, and truncate or fail on "
        "those that do not fit. Nothing was written and no offset moved. Rebuild the target in "
        "the new type with `dbt run --full-refresh -s m`, or cast the column in the model's SQL "
        "to the type the target keeps (`cast(`n` as bigint)`) where its values fit."
    )


def test_a_target_that_cannot_follow_is_said_in_full() -> None:
    said = cannot_follow("m", "`s`.`m`", [change("int", "bigint", "a"), change("int", "bigint")])
    assert said == (
        "Model m: columns a (int -> bigint), v (int -> bigint) widened in its source, and its "
        "target `s`.`m` cannot follow in place: it does not have type widening enabled (the "
        "adapter enables it on the stream targets it creates), and a value in the new type does "
        "not fit the old. Nothing was written and no offset moved. Run ALTER TABLE `s`.`m` SET "
        "TBLPROPERTIES ('delta.enableTypeWidening' = 'true') and build again (the build then "
        "widens the column), or rebuild the target with `dbt run --full-refresh -s m`."
    )


@pytest.mark.parametrize(
    ("properties", "altered"),
    [
        ([{"key": "delta.enableTypeWidening", "value": "TRUE"}], True),
        ([{"key": "delta.enableTypeWidening", "value": "false"}], False),
        ([{"key": "delta.appendOnly", "value": "true"}], False),
        ([], False),
    ],
)
def test_only_a_target_with_type_widening_is_altered(properties: list, altered: bool) -> None:
    asked: list[str] = []

    def run(sql: str) -> list[dict]:
        asked.append(sql)
        return properties if sql.startswith("show tblproperties") else []

    widened = [change("int", "bigint", "a"), change("float", "double", "b")]
    plan = widen_target(run, "m", "`s`.`t`", widened, "append_new_columns")
    alters = [
        "alter table `s`.`t` alter column `a` type bigint",
        "alter table `s`.`t` alter column `b` type double",
    ]
    assert asked == ["show tblproperties `s`.`t`", *(alters if altered else [])]
    assert (plan.apply, plan.blocked) == ((widened, []) if altered else ([], widened))


def test_a_column_missing_on_either_side_does_not_hide_the_next_ones() -> None:
    found = type_changes(
        ["gone", "added", "v"], {"added": "int", "v": "bigint"}, {"gone": "int", "v": "int"}
    )
    assert found == [change("int", "bigint")]


def test_a_target_refuses_a_narrowing_naming_the_model_and_the_setting() -> None:
    def run(sql: str) -> list[dict]:
        return [{"key": "delta.enableTypeWidening", "value": "true"}]

    with pytest.raises(StreamError) as refused:
        widen_target(run, "orders", "`s`.`orders`", [change("bigint", "int")], "sync_all_columns")
    assert refused.value.msg.startswith(
        "Model orders: the type of column v (bigint -> int) changed between its target "
        "`s`.`orders` and the model's output, and Delta cannot change the target's column to it "
        "in place (on_schema_change 'sync_all_columns')"
    )


def test_a_field_widened_inside_a_struct_array_or_map_is_widened_there() -> None:
    changes = type_changes(
        ["seq", "items", "prices", "grown"],
        {
            "seq": "struct<ts:bigint,`l sn`:bigint>",
            "items": "array<struct<q:double>>",
            "prices": "map<string,decimal(12,2)>",
            "grown": "struct<p:int,q:int>",
        },
        {
            "seq": "struct<ts:bigint,`l sn`:int>",
            "items": "array<struct<q:float>>",
            "prices": "map<string,decimal(10,2)>",
            "grown": "struct<p:int>",
        },
    )
    assert [str(change) for change in changes] == [
        "seq.l sn: int -> bigint",
        "items.element.q: float -> double",
        "prices.value: decimal(10,2) -> decimal(12,2)",
        "grown: struct<p:int> -> struct<p:int,q:int>",  # its shape changed: compared whole
    ]
    assert [change.alter("s.t") for change in changes[:3]] == [
        "alter table s.t alter column `seq`.`l sn` type bigint",
        "alter table s.t alter column `items`.element.`q` type double",
        "alter table s.t alter column `prices`.value type decimal(12,2)",
    ]
    assert [change.is_widening for change in changes] == [True, True, True, False]


def test_a_field_changed_otherwise_refuses_its_whole_column() -> None:
    [change] = type_changes(
        ["s"], {"s": "struct<a:string,b:bigint>"}, {"s": "struct<a:int,b:int>"}
    )
    assert str(change) == "s: struct<a:int,b:int> -> struct<a:string,b:bigint>"
    assert not change.is_widening
