"""What `dbt run-operation show_streams` prints: an aligned table for a person (as `dbt show`
prints rows), or one JSON object per line for a script (`--args '{format: json}'`)."""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dbt.adapters.spark_streams.streams.errors import StreamError

# The table's columns: (title, the status field it shows).
TABLE_COLUMNS = (
    ("name", "name"),
    ("source", "source_table"),
    ("type", "source_type"),
    ("mode", "mode"),
    ("consumer", "consumer"),
    ("offset", "offset_version"),
    ("offset_time", "offset_timestamp"),
    ("stale", "stale"),
    ("stale_after", "stale_after"),
    ("last_consumed", "last_consumed_on"),
    ("owner_gone", "owner_gone"),
)
FORMATS = ("table", "json")


def format_streams(streams: Sequence[dict[str, Any]], output_format: str) -> str:
    """The streams (stream_records' dicts, in order) as a table or as JSON lines."""
    if output_format == "json":
        return "\n".join(json.dumps(stream, default=_text) for stream in streams)
    if output_format == "table":
        return stream_table(streams)
    raise StreamError(
        f"show_streams: format '{output_format}' is not one of {', '.join(FORMATS)}. "
        "Run `dbt run-operation show_streams --args '{format: json}'` for JSON lines."
    )


def stream_table(streams: Sequence[dict[str, Any]]) -> str:
    """A header, a rule and one row per stream, each column as wide as its widest cell."""
    header = [title for title, _ in TABLE_COLUMNS]
    rows = [[_cell(stream.get(field)) for _, field in TABLE_COLUMNS] for stream in streams]
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    rule = ["-" * width for width in widths]
    return "\n".join(_line(cells, widths) for cells in [header, rule, *rows])


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"


def _cell(value: Any) -> str:
    """A value as the table shows it: `-` for none, lower-case booleans, times to the
    second."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    return str(value)


def _text(value: Any) -> str:
    """JSON has no time type: times as ISO text, anything else as its text."""
    return value.isoformat(sep=" ") if isinstance(value, datetime) else str(value)
