"""A stream target's columns following their source's types, by Delta's type widening.

A source column widened in place (an ALTER, or a MERGE or INSERT with schema evolution on a
table with `delta.enableTypeWidening`) reaches the build's change set in its new type, while
the target still holds the old one: the write would fail (DELTA_CAST_OVERFLOW_IN_TABLE_WRITE)
as soon as a value does not fit. So before the write, each column the target keeps is compared
with the change set's:

- a widening Delta applies in place (below) widens the target's column first, with
  `ALTER TABLE ... ALTER COLUMN ... TYPE` (a metadata commit: no file is rewritten). The target
  needs type widening enabled, which the adapter does on the stream targets it creates. Into
  an older target the write goes ahead as before: Delta's store assignment writes the values
  that fit exactly and fails on one that does not, and that failure is said as a sentence
  naming the ALTER that enables widening, or --full-refresh;
- any other change of type (a narrower type, another family: string to int) is refused before
  anything is written, whatever on_schema_change says: a write would cast every value, and
  truncate or fail on the ones that do not fit. The sentence names --full-refresh and a cast in
  the model;
- on_schema_change 'fail' refuses a widening too, as it refuses every change of the schema.

The widening before the write is its own commit on the target, outside the write's: a build
that then fails leaves the target wider and its offsets where they were, which the next build
needs anyway. Widenings Delta 4 applies in place: a wider integer type; an integer type to
double (not bigint) or to a decimal with room for all its digits; float to double; a decimal
to one whose precision grows at least as much as its scale; date to timestamp_ntz; and each of
those for a field inside a struct, an array's element or a map's key or value, where the
column's shape (its fields, in order) stayed. A column whose shape changed compares whole.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.records.column_types import NESTED as COMPLEX_TYPES
from dbt.adapters.spark_streams.streams.records.column_types import ColumnType, parse_type
from dbt.adapters.spark_streams.streams.sql.catalog import table_properties
from dbt.adapters.spark_streams.streams.sql.quoting import quote
from dbt.adapters.spark_streams.streams.sql.run import RunSql

TYPE_WIDENING = "delta.enableTypeWidening"
# Spark's and Delta's errors of a write whose value does not fit its column's type
# (CAST_OVERFLOW_IN_TABLE_INSERT, DELTA_CAST_OVERFLOW_IN_TABLE_WRITE).
CAST_OVERFLOW = "CAST_OVERFLOW_IN_TABLE_"
INTEGRAL = ("tinyint", "smallint", "int", "bigint")
# The decimal digits an integer type needs: the narrowest decimal it widens to is (digits, 0).
INTEGER_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
ALIASES = {"byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint"}
DECIMAL = re.compile(r"^(?:decimal|numeric|dec)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")


@dataclass(frozen=True)
class SqlType:
    """A column's type as DESCRIBE spells it: its name, and a decimal's precision and scale."""

    name: str
    precision: int = 0
    scale: int = 0

    @classmethod
    def parse(cls, text: str) -> "SqlType":
        spelled = " ".join(str(text).strip().lower().split())
        found = DECIMAL.match(spelled)
        if found:
            return cls("decimal", int(found[1] or 10), int(found[2] or 0))
        return cls(ALIASES.get(spelled, spelled))

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})" if self.name == "decimal" else self.name


def widens(old: SqlType, new: SqlType) -> bool:
    """Whether Delta widens a column of type `old` to `new` in place."""
    if old == new:
        return False
    if old.name in INTEGRAL:
        if new.name in INTEGRAL:
            return INTEGRAL.index(new.name) > INTEGRAL.index(old.name)
        if new.name == "double":
            return old.name != "bigint"
        return new.name == "decimal" and new.precision - new.scale >= INTEGER_DIGITS[old.name]
    if old.name == "decimal" and new.name == "decimal":
        grows, scales = new.precision - old.precision, new.scale - old.scale
        return grows >= scales >= 0
    return (old.name, new.name) in (("float", "double"), ("date", "timestamp_ntz"))


@dataclass(frozen=True)
class TypeChange:
    """A column the target keeps whose type differs in the change set; `path`: a field inside
    it (a struct's field by name, an array's `element`, a map's `key` or `value`)."""

    column: str
    old: SqlType
    new: SqlType
    path: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{'.'.join((self.column, *self.path))}: {self.old} -> {self.new}"

    @property
    def is_widening(self) -> bool:
        return widens(self.old, self.new)

    def alter(self, target: str) -> str:
        """The statement that widens the target's column (or the field inside it)."""
        named = ".".join(
            [quote(self.column)] + [p if p in NESTED else quote(p) for p in self.path]
        )
        return f"alter table {target} alter column {named} type {self.new}"


NESTED = ("element", "key", "value")  # an array's and a map's parts in a column's path


def nested_changes(
    column: str, old: ColumnType, new: ColumnType, path: tuple[str, ...] = ()
) -> list[TypeChange] | None:
    """The changes of the fields inside a struct, array or map column whose shape stayed (the
    same fields, in order); None where the shape changed. Leaves compare as SqlType does."""
    if old.name not in COMPLEX_TYPES and new.name not in COMPLEX_TYPES:
        before, after = SqlType.parse(old.name), SqlType.parse(new.name)
        return [] if before == after else [TypeChange(column, before, after, path)]
    if old.name != new.name or len(old.fields) != len(new.fields):
        return None
    found: list[TypeChange] = []
    for (name, old_part), (new_name, new_part) in zip(old.fields, new.fields, strict=True):
        if name.lower() != new_name.lower():
            return None
        more = nested_changes(column, old_part, new_part, (*path, _unquoted(name)))
        if more is None:
            return None
        found += more
    return found


def _unquoted(name: str) -> str:
    """A struct field's name as DESCRIBE spells it, without its backquotes if it has them."""
    if len(name) > 1 and name.startswith("`") and name.endswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def type_changes(
    columns: Iterable[str], change_types: Mapping[str, str], target_types: Mapping[str, str]
) -> list[TypeChange]:
    """The columns (of `columns`, the ones the target keeps) whose type differs between the
    change set and the target; names match case-insensitively, as Spark resolves them."""
    changes = {name.lower(): dtype for name, dtype in change_types.items()}
    targets = {name.lower(): dtype for name, dtype in target_types.items()}
    found = []
    for column in columns:
        new, old = changes.get(column.lower()), targets.get(column.lower())
        if new is None or old is None:
            continue  # added and dropped columns are on_schema_change's
        change = TypeChange(column, SqlType.parse(old), SqlType.parse(new))
        if change.old == change.new:
            continue
        inside = nested_changes(column, parse_type(old), parse_type(new))  # same shape
        if inside and all(part.is_widening for part in inside):
            found += inside
        else:
            found.append(change)
    return found


@dataclass(frozen=True)
class WideningPlan:
    """The widenings to apply before the write, and those the target cannot take in place
    (it lacks type widening): the write then goes ahead with values that fit, which Delta's
    store assignment writes exactly, and fails on the first that does not (see
    `cannot_follow`)."""

    apply: list[TypeChange]
    blocked: list[TypeChange]


def widenings(
    model: str,
    target: str,
    changes: list[TypeChange],
    on_schema_change: str,
    widening_enabled: bool,
) -> WideningPlan:
    """What to do with the columns whose type differs; a StreamError naming the fix for a
    change that is no widening (nothing is written, no offset moves)."""
    others = [change for change in changes if not change.is_widening]
    if others:
        raise StreamError(_not_a_widening(model, target, others, on_schema_change))
    if changes and on_schema_change == "fail":
        raise StreamError(
            f"Model {model}: {_listed(changes)} widened in its source, and on_schema_change "
            "'fail' stops the build before it writes: nothing was written and no offset "
            "moved. With any other on_schema_change the build widens the target's column as "
            f"the source did; or rebuild the target with `dbt run --full-refresh -s {model}`."
        )
    if widening_enabled:
        return WideningPlan(changes, [])
    return WideningPlan([], changes)


def cannot_follow(model: str, target: str, blocked: list[TypeChange]) -> str:
    """The error of a write that failed on a value only the widened type holds, into a target
    without type widening (one created before the adapter enabled it on stream targets)."""
    return (
        f"Model {model}: {_listed(blocked)} widened in its source, and its target {target} "
        "cannot follow in place: it does not have type widening enabled (the adapter enables "
        "it on the stream targets it creates), and a value in the new type does not fit the "
        "old. Nothing was written and no offset moved. Run ALTER TABLE "
        f"{target} SET TBLPROPERTIES ('{TYPE_WIDENING}' = 'true') and build again (the build "
        f"then widens the column), or rebuild the target with `dbt run --full-refresh -s "
        f"{model}`."
    )


def _listed(changes: list[TypeChange]) -> str:
    named = ", ".join(f"{change.column} ({change.old} -> {change.new})" for change in changes)
    return f"column{'s' if len(changes) > 1 else ''} {named}"


def _not_a_widening(
    model: str, target: str, others: list[TypeChange], on_schema_change: str
) -> str:
    first = others[0]
    return (
        f"Model {model}: the type of {_listed(others)} changed between its target {target} and "
        "the model's output, and Delta cannot change the target's column to it in place "
        f"(on_schema_change '{on_schema_change}'): writing would cast every value, and "
        "truncate or fail on those that do not fit. Nothing was written and no offset moved. "
        f"Rebuild the target in the new type with `dbt run --full-refresh -s {model}`, or "
        "cast the column in the model's SQL to the type the target keeps "
        f"(`cast({quote(first.column)} as {first.old})`) where its values fit."
    )


def widen_target(
    run: RunSql,
    model: str,
    target: str,
    changes: list[TypeChange],
    on_schema_change: str,
) -> WideningPlan:
    """Widen the target's columns as `changes` say, before the build's write (its table
    properties are read only when a column changed); what was widened, and what could not
    be."""
    if not changes:
        return WideningPlan([], [])
    properties = table_properties(run, target)
    enabled = str(properties.get(TYPE_WIDENING, "")).lower() == "true"
    plan = widenings(model, target, changes, on_schema_change, enabled)
    for change in plan.apply:
        run(change.alter(target))
    return plan
