"""Python values bound into SQL (a seed's rows) as Spark SQL literals.

dbt loads a seed with `insert ... values (cast(%s as <type>), ...)` and hands the CSV's values
as bindings; a session connection has no driver-side binding, so each value becomes a literal
in the statement. dbt-spark's session wrapper writes `'None'` for an empty cell and breaks on
a quote (`O'Brien`); here an empty cell is NULL, text is escaped, and numbers keep every digit
(a float would round a 19-digit id).
"""

import datetime as dt
from decimal import Decimal
from typing import Any

from dbt.adapters.spark_streams.streams.sql.quoting import string_literal


def spark_literal(value: Any) -> str:
    """`value` as a Spark SQL literal that the seed's cast turns into the column's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dt.datetime | dt.date):
        return string_literal(
            value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
        )
    return string_literal(str(value))
