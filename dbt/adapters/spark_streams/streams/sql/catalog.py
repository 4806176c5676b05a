"""What the catalog says of a table or view: DESCRIBE TABLE EXTENDED's rows read, its columns
spelled as the catalog spells them, and whether a name is a view."""

from collections.abc import Sequence
from functools import cached_property
from typing import Any

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.quoting import quote_path, string_literal
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql

DETAIL_SECTION = "# Detailed Table Information"


class CatalogEntry:
    """A stream's source as the catalog describes it, read once: the kind of source is chosen
    from it (kinds/choose.py), and the chosen kind describes the source from the same rows."""

    def __init__(self, run: RunSql, schema: str, identifier: str) -> None:
        self.run = run
        self.schema = schema
        self.identifier = identifier

    @property
    def name(self) -> str:
        return quote_path(self.schema, self.identifier)

    @cached_property
    def described(self) -> list[Row]:
        """DESCRIBE TABLE EXTENDED's rows (what it raised, when the name is not readable)."""
        return self.run(f"describe table extended {self.name}")

    @cached_property
    def is_view(self) -> bool:
        """Whether the name is a view: no provider, and a detail section whose Type is VIEW
        or, where there is no such section (a temporary view's), listed among the views. An
        unreadable name is no view."""
        try:
            provider = detailed_info(self.described, "Provider")
        except Exception:
            return False
        if provider is not None:
            return False
        kind = detailed_info(self.described, "Type")
        if kind is not None:
            return kind.upper() == "VIEW"
        return is_view(self.run, self.schema, self.identifier)


def detailed_info(described: list[Row], label: str) -> str | None:
    """A value of DESCRIBE TABLE EXTENDED's detailed section (e.g. Provider); a column of the
    same name above that section does not count."""
    in_section = False
    for row in described:
        in_section = in_section or str(row["col_name"]).startswith(DETAIL_SECTION)
        if in_section and row["col_name"] == label:
            return str(row["data_type"])
    return None


def column_names(described: list[Row]) -> tuple[str, ...]:
    """Column names in table order; DESCRIBE's partition and detail sections are skipped."""
    return tuple(str(row["col_name"]) for row in _column_rows(described))


def column_types(described: list[Row]) -> tuple[str, ...]:
    """Column types (catalog strings such as map<string,int>), in the order of `_columns`."""
    return tuple(str(row["data_type"]) for row in _column_rows(described))


def _column_rows(described: list[Row]) -> list[Row]:
    """DESCRIBE's rows of the table's columns: those before its first section header."""
    rows = []
    for row in described:
        column = row["col_name"]
        if not column or column.startswith("#"):
            break
        rows.append(row)
    return rows


def spell_columns(
    reader: str, unique_key: tuple[str, ...], columns: tuple[str, ...], where: str, fix: str
) -> tuple[str, ...]:
    """`unique_key` spelled as `columns` spell it; an error naming `where` and the fix when a
    key column is missing."""
    spelling = {column.lower(): column for column in columns}
    missing = [key for key in unique_key if key.lower() not in spelling]
    if missing:
        raise StreamError(
            f"{reader}: unique_key column(s) {', '.join(missing)} not in {where} (columns: "
            f"{', '.join(columns)}). {fix}"
        )
    return tuple(dict.fromkeys(spelling[column.lower()] for column in unique_key))


# The calls that read a table without a stream of their own; errors name them as called.
CALLS = ("changes(", "for_system_time(", "current_valid_time(")


def reader_label(reader: str) -> str:
    """How errors name a reader: `Stream <name>`, or the call itself (`changes(...)`,
    `for_system_time(...)`, `current_valid_time(...)`)."""
    return reader if reader.startswith(CALLS) else f"Stream {reader}"


def is_view(run: RunSql, schema: str, identifier: str) -> bool:
    """Whether the name is a view (permanent or temporary) rather than a missing table."""
    try:
        views = run(f"show views in {quote_path(schema)} like {string_literal(identifier)}")
    except Exception:
        return False
    return any(row.get("viewName") == identifier for row in views)


def table_bytes(run: RunSql, table: str) -> int:
    """The bytes of a Delta table's current files, from its snapshot (DESCRIBE DETAIL, no data
    read); 0 when Delta does not say."""
    [detail] = run(f"describe detail {quoted_name(table)}")
    return int(detail.get("sizeInBytes") or 0)


def quoted_name(table: str) -> str:
    """A dotted table name with each part quoted, unless it is quoted already: Delta's grammar
    takes `describe detail s.history` for Spark's (a column `history` of a table `detail`)."""
    return table if "`" in table else quote_path(*table.split("."))


def table_properties(run: RunSql, table: str) -> dict[str, Any]:
    """SHOW TBLPROPERTIES of a table: each key and its value."""
    return {str(row["key"]): row["value"] for row in run(f"show tblproperties {table}")}


def as_key(value: Any) -> tuple[str, ...]:
    """A unique_key as dbt accepts it (a name, a list of names, or nothing) as a tuple."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(item) for item in value)


def unknown_columns(named: Sequence[str], columns: Sequence[str]) -> list[str]:
    """The names in `named` that are none of `columns`, compared as Spark compares them
    (case-insensitively): what a config's column list names wrongly."""
    lowered = {column.lower() for column in columns}
    return [name for name in named if name.lower() not in lowered]
