"""`current_valid_time()`: the current rows of a valid-time table, as a Teradata CURRENT
VALIDTIME query returns them (docs/concepts/contract.md, valid time).

A row is current when its period covers the reference time t: `valid_from <= t` and `t <
valid_to`, a null `valid_to` being open. The result is a plain table: the period columns are
left out. t is either the time the dbt invocation started, one instant for every model of the
run as Teradata fixes TEMPORAL_TIMESTAMP for a whole transaction ('transaction'), or each
statement's own current_timestamp(), which also sees rows that became current since ('now').
"""

from collections.abc import Sequence
from datetime import UTC, datetime

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote

REFERENCE_TIMES = ("transaction", "now")


def current_valid_time_sql(
    relation: str,
    columns: Sequence[str] | None,
    period: tuple[str, str],
    at: str,
    started: datetime,
) -> str:
    """The current rows of `relation` (whose `columns` are as the catalog lists them, None
    when it has no catalog entry), without its `period` columns (valid_from, valid_to); an
    error naming the fix otherwise."""
    label = f"current_valid_time({relation})"
    spelled = {column.lower(): column for column in columns or period}
    for setting, name in zip(("valid_from", "valid_to"), period, strict=True):
        if name.lower() not in spelled:
            raise StreamError(
                f"{label}: {setting}='{name}' is not a column of {relation}; its columns are "
                f"{', '.join(columns or ())}. Name its period columns (for a dbt snapshot: "
                "valid_from='dbt_valid_from', valid_to='dbt_valid_to')."
            )
    if at not in REFERENCE_TIMES:
        raise StreamError(
            f"{label}: at={at!r} is not a reference time; use 'transaction' (when this dbt "
            "invocation started, the same in every model) or 'now' (each statement's "
            "current_timestamp())."
        )
    valid_from, valid_to = (quote(spelled[name.lower()]) for name in period)
    if columns is None:
        kept = f"* except ({valid_from}, {valid_to})"
    else:
        kept = column_list(c for c in columns if c.lower() not in {n.lower() for n in period})
    time = _reference_time(at, started)
    return (
        f"(select {kept} from {relation} "
        f"where {valid_from} <= {time} and ({valid_to} is null or {time} < {valid_to}))"
    )


def _reference_time(at: str, started: datetime) -> str:
    """t as SQL: the invocation's start as an instant (independent of the session's time
    zone), or current_timestamp()."""
    if at == "now":
        return "current_timestamp()"
    instant = started if started.tzinfo else started.replace(tzinfo=UTC)
    return f"timestamp_micros({round(instant.timestamp() * 1_000_000)})"
