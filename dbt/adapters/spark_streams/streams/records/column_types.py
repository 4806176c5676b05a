"""Column types of a source and the canonical form that makes any of them comparable.

Netting compares rows: `<=>` for a keyed stream, GROUP BY for a keyless one. Spark has no
ordering for MAP and VARIANT (nor for a struct or array holding one), so both refuse such rows.
For those, netting compares a canonical form instead: map entries sorted by key, a variant as
its JSON text (a variant keeps an object's fields sorted by name, so field order does not
count). Everything else compares as Spark compares it: NaN equals NaN, -0.0 equals 0.0.

Row ids hash the canonical form's JSON, where -0.0 is written as 0.0, so rows that net as
equal always get equal ids.

The types come from DESCRIBE's `data_type` strings (Spark's catalog strings). These do not
quote struct field names, so a field name holding `:`, `,`, `<` or `>` can be read wrongly;
a reading that fails leaves the column as Spark compares it, as before.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from dbt.adapters.spark_streams.streams.sql.quoting import quote, string_literal

UNORDERED = ("map", "variant")
FLOATS = ("float", "double")
NESTED = ("array", "map", "struct")
SCALAR = re.compile(r"[a-z_][a-z0-9_]*(\(\s*\d+\s*(,\s*\d+\s*)?\))?", re.IGNORECASE)


@dataclass(frozen=True)
class ColumnType:
    """A parsed type: `name` is array, map, struct or a scalar's catalog string (int,
    decimal(10,2), variant); `fields` are a struct's fields, an array's element or a map's
    key and value, by name."""

    name: str
    fields: tuple[tuple[str, "ColumnType"], ...] = ()

    def field(self, name: str) -> "ColumnType":
        return dict(self.fields)[name]


def parse_type(text: str) -> ColumnType:
    """The type a catalog string spells; one that cannot be read is an opaque scalar, which
    netting compares as Spark does (what it did for every type before)."""
    parsed = _type(text.strip(), 0)
    if parsed is None or parsed[1] != len(text.strip()):
        return ColumnType(text)
    return parsed[0]


def row_type(
    columns: Iterable[str], column_types: Iterable[str], names: Iterable[str] | None = None
) -> ColumnType:
    """The struct of `names` (default: every column) with their types. Names match the
    columns case-insensitively, as in Spark; a column without a known type is opaque."""
    columns = tuple(columns)
    by_name = {column.lower(): kind for column, kind in zip(columns, column_types, strict=False)}
    chosen = columns if names is None else tuple(names)
    return ColumnType(
        "struct", tuple((name, parse_type(by_name.get(name.lower(), ""))) for name in chosen)
    )


def _type(text: str, pos: int) -> tuple[ColumnType, int] | None:
    """The type starting at `pos` and where it ends, or None."""
    for kind in NESTED:
        if text.startswith(f"{kind}<", pos):
            return _nested(text, kind, pos + len(kind) + 1)
    scalar = SCALAR.match(text, pos)
    if scalar is None or scalar.group().lower() in NESTED:
        return None
    return ColumnType(scalar.group().lower()), scalar.end()


def _nested(text: str, kind: str, pos: int) -> tuple[ColumnType, int] | None:
    """An array, map or struct whose `<` ends just before `pos`."""
    if kind == "struct":
        fields = _fields(text, pos)
    else:
        names = ("element",) if kind == "array" else ("key", "value")
        fields = _positional(text, pos, names)
    if fields is None:
        return None
    found, end = fields
    return ColumnType(kind, found), end


def _positional(
    text: str, pos: int, names: tuple[str, ...]
) -> tuple[tuple[tuple[str, ColumnType], ...], int] | None:
    """An array's element or a map's key and value: types separated by `,`, then `>`."""
    found = []
    for index, name in enumerate(names):
        parsed = _type(text, pos)
        closing = "," if index < len(names) - 1 else ">"
        if parsed is None or not text.startswith(closing, parsed[1]):
            return None
        found.append((name, parsed[0]))
        pos = parsed[1] + 1
    return tuple(found), pos


def _fields(text: str, pos: int) -> tuple[tuple[tuple[str, ColumnType], ...], int] | None:
    """A struct's `name:type` list up to its `>`. A name ends at the first `:` after which a
    type reads, followed by `,` or `>` (names may themselves hold `:`)."""
    found: list[tuple[str, ColumnType]] = []
    if text.startswith(">", pos):
        return (), pos + 1
    while True:
        field = _field(text, pos)
        if field is None:
            return None
        name, parsed, end = field
        found.append((name, parsed))
        if text[end] == ">":
            return tuple(found), end + 1
        pos = end + 1


def _field(text: str, pos: int) -> tuple[str, ColumnType, int] | None:
    """One `name:type` of a struct, and the position of the `,` or `>` after it."""
    colon = text.find(":", pos)
    while colon != -1:
        parsed = _type(text, colon + 1)
        if parsed is not None and text[parsed[1] : parsed[1] + 1] in (",", ">"):
            return text[pos:colon], parsed[0], parsed[1]
        colon = text.find(":", colon + 1)
    return None


def unordered(kind: ColumnType) -> bool:
    """Whether Spark has no ordering for the type: `<=>` and GROUP BY refuse it."""
    return kind.name in UNORDERED or any(unordered(field) for _, field in kind.fields)


def _has_float(kind: ColumnType) -> bool:
    return kind.name in FLOATS or any(_has_float(field) for _, field in kind.fields)


def comparable(expr: str, kind: ColumnType) -> str:
    """`expr` itself where Spark can compare it (the fast path), else its canonical form."""
    return canonical(expr, kind) if unordered(kind) else expr


def canonical(expr: str, kind: ColumnType, depth: int = 0) -> str:
    """An orderable expression, equal for values netting counts as equal: map entries
    sorted by key, a variant's JSON text, -0.0 as 0.0. Types without any of these are
    returned as they are, so ordinary columns cost nothing. `depth` names lambda variables
    apart when types nest."""
    if not (unordered(kind) or _has_float(kind)):
        return expr
    if kind.name in FLOATS:
        return f"if({expr} = 0, abs({expr}), {expr})"
    if kind.name == "variant":
        return f"to_json({expr})"
    if kind.name == "struct":
        fields = canonical_fields(kind, expr + ".", depth)
        return f"if({expr} is null, null, named_struct({fields}))"
    var = f"_canonical{depth}"
    if kind.name == "array":
        element = canonical(var, kind.field("element"), depth + 1)
        return f"transform({expr}, {var} -> {element})"
    key = canonical(f"{var}.key", kind.field("key"), depth + 1)
    value = canonical(f"{var}.value", kind.field("value"), depth + 1)
    entry = f"named_struct('key', {key}, 'value', {value})"
    return f"array_sort(transform(map_entries({expr}), {var} -> {entry}))"


def canonical_fields(struct: ColumnType, prefix: str = "", depth: int = 0) -> str:
    """named_struct arguments of a struct's fields in canonical form, read as prefix.`field`."""
    return ", ".join(
        f"{string_literal(name)}, {canonical(prefix + quote(name), kind, depth)}"
        for name, kind in struct.fields
    )
