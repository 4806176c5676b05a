"""Quoting: every name and value a user writes reaches Spark as an identifier or a literal."""

from collections.abc import Iterable


def quote(identifier: str) -> str:
    """A Spark SQL identifier, whatever characters it holds."""
    return "`" + identifier.replace("`", "``") + "`"


def quote_path(*parts: str) -> str:
    """A dotted name (schema.table) with each part quoted."""
    return ".".join(quote(part) for part in parts if part)


def string_literal(value: str) -> str:
    """A Spark SQL string literal; backslashes and quotes are escaped."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def column_list(columns: Iterable[str], prefix: str = "") -> str:
    """`a`, `b` or, with a prefix, p.`a`, p.`b`."""
    return ", ".join(prefix + quote(column) for column in columns)
