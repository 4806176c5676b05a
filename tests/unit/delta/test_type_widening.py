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

    assert widen_target(run, "m", "t", [], "ignore").apply == []
    assert asked == []
    widen_target(run, "m", "t", [change("int", "bigint")], "ignore")
    assert asked == ["show tblproperties t", "alter table t alter column `v` type bigint"]
