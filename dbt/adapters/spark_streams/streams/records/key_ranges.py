"""The change set's key ranges, named in the write's join so Delta skips the target's other files.

A MERGE first joins its change set with the target to find the rows it touches, and Delta has
no way to know which target files can hold the change set's keys: it reads the key of every
row. At 20M rows that read was a quarter of a stream build of 2,000 changes. Delta does skip
files by their min / max statistics for a predicate on the target alone in the MERGE's
condition, and a stream target is written in key order (file_rows), so its files cover narrow
key ranges. Changes are rarely spread evenly over the keys (new keys at the end, updates to
recent ones), so a few ranges cover them: the build asks the change set for at most
MOST_RANGES of them, split at its widest gaps between keys, and adds
`t.key between low and high or ...` to the join. Every key of the change set lies in a range,
so the join matches exactly the rows it matched without them.

Finding the ranges reads the change set once more (about 0.5 s on two cores, most of it the
change feed), while reading a target's keys costs about 0.065 s per million rows there: the
ranges pay from about ten million rows. So by default (`key_ranges='auto'`) a build asks for
them only when the target's files hold at least AUTO_MIN_TARGET_BYTES; `key_ranges=true` always
does, `false` never.

Only an integer first key column is ranged (a gap between strings or timestamps has no useful
size); the join compares null keys as equal (<=>), so a null key in the change set adds
`t.key is null`.
"""

from collections.abc import Sequence

from dbt.adapters.spark_streams.streams.sql.run import Row

MOST_RANGES = 16
# 256 MiB: about ten million rows of a table of seven short columns.
AUTO_MIN_TARGET_BYTES = 256 * 2**20
INTEGER_TYPES = ("tinyint", "smallint", "int", "integer", "bigint", "long")


def wants_ranges(setting: bool | None, target_bytes: int | None) -> bool:
    """Whether a build looks for key ranges: the model's `key_ranges` (None: auto, by the
    target's size in bytes)."""
    if setting is None:
        return (target_bytes or 0) >= AUTO_MIN_TARGET_BYTES
    return setting


def can_range(data_type: str | None) -> bool:
    """Whether a key of this Spark type gets ranges (an integer type)."""
    return (data_type or "").strip().lower() in INTEGER_TYPES


def key_ranges_sql(changes: str, key: str, most: int) -> str:
    """A query for the change set's keys as at most `most` ranges: rows (low, high, has_null).

    The distinct keys in order; of the gaps between neighbours that skip a key, the widest
    start a range (the first key counts as one). A null key, first in that order, starts a
    group whose low and high are null, or joins the first range when `most` is 1. The gaps
    are decimals: between keys at both ends of their type (hashed ids, negative and positive
    ids) a gap does not fit the type, and wrapped around (ANSI arithmetic off) or failed.
    """
    return f"""with keys as (select distinct {key} as k from {changes}),
gaps as (select k, cast(k as decimal(20, 0)) - lag(k) over (order by k) as gap from keys),
starts as (
  select k, if(row_number() over (order by gap desc nulls first, k) <= {most}
               and (gap is null or gap > 1), 1, 0) as starts
  from gaps),
groups as (select k, sum(starts) over (order by k) as range_id from starts)
select min(k) as low, max(k) as high, count(k) < count(*) as has_null
from groups group by range_id"""


def target_predicate(column: str, rows: Sequence[Row]) -> str:
    """`(column between low and high or ...)` for the ranges, or '' when there are none."""
    ranges = sorted((row["low"], row["high"]) for row in rows if row["low"] is not None)
    terms = [f"{column} between {int(low)} and {int(high)}" for low, high in ranges]
    if any(row["has_null"] for row in rows):
        terms.append(f"{column} is null")
    return f"({' or '.join(terms)})" if terms else ""
