"""key_ranges_sql on Spark itself, at the edges of every integer key type.

The gap between two neighbouring keys can be wider than the key's own type holds (keys at both
ends of it: hashed bigint ids, negative and positive ids). Subtracted in that type, it wrapped
around (dbt-spark turns ANSI arithmetic off) to a small or negative number, so the widest gap
of all was never split at; under ANSI arithmetic it would fail the build. The gaps are exact,
with ANSI arithmetic off (as every session of the adapter runs) and on. The unit tests' edge
cases (no change, only a null key, a null key with one range, duplicate keys) run here on Spark.
"""

import pytest
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.streams.records.key_ranges import key_ranges_sql, target_predicate

EXTREMES = {
    "tinyint": (-128, 127),
    "smallint": (-32768, 32767),
    "int": (-(2**31), 2**31 - 1),
    "bigint": (-(2**63), 2**63 - 1),
}


def predicate_on_spark(session: SparkSession, keys: list, data_type: str, most: int) -> str:
    """The ranges' predicate for a change set of these keys (none: an empty change set), as
    Spark computes the ranges."""
    typed = [f"(cast({'null' if k is None else k} as {data_type}))" for k in keys or [None]]
    changes = f"(select * from values {', '.join(typed)} as changes(k) where {bool(keys)})"
    rows = [row.asDict() for row in session.sql(key_ranges_sql(changes, "k", most)).collect()]
    return target_predicate("t.k", rows)


@pytest.mark.parametrize("ansi", ["false", "true"])
@pytest.mark.parametrize("data_type", sorted(EXTREMES))
def test_ranges_at_both_ends_of_the_type(spark: SparkSession, data_type: str, ansi: str) -> None:
    session = spark.newSession()  # its own SQL confs
    session.conf.set("spark.sql.ansi.enabled", ansi)
    low, high = EXTREMES[data_type]
    keys = [low, low + 1, high - 1, high, None]

    # the null key and the lowest key start groups (no gap before them), and the one gap wider
    # than 1: between low + 1 and high - 1
    assert predicate_on_spark(session, keys, data_type, 4) == (
        f"(t.k between {low} and {low + 1} or t.k between {high - 1} and {high} or t.k is null)"
    )


@pytest.mark.parametrize(
    ("keys", "most", "predicate"),
    [
        ([], 16, ""),  # nothing changed: the join stays as it was
        ([None], 16, "(t.k is null)"),
        ([None, 1, 5], 1, "(t.k between 1 and 5 or t.k is null)"),  # the null joins the range
        ([7, 3, 4, 12, 3], 2, "(t.k between 3 and 7 or t.k between 12 and 12)"),
    ],
)
def test_edge_cases_on_spark(spark: SparkSession, keys: list, most: int, predicate: str) -> None:
    assert predicate_on_spark(spark, keys, "int", most) == predicate
