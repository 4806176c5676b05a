"""key_ranges_sql on Spark itself, at the edges of every integer key type.

The gap between two neighbouring keys can be wider than the key's own type holds (keys at both
ends of it: hashed bigint ids, negative and positive ids). Subtracted in that type, it wrapped
around (dbt-spark turns ANSI arithmetic off) to a small or negative number, so the widest gap
of all was never split at; under ANSI arithmetic it would fail the build. The gaps are exact,
with ANSI arithmetic off (as every session of the adapter runs) and on.
"""

import pytest
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.streams.key_ranges import key_ranges_sql, target_predicate

EXTREMES = {
    "tinyint": (-128, 127),
    "smallint": (-32768, 32767),
    "int": (-(2**31), 2**31 - 1),
    "bigint": (-(2**63), 2**63 - 1),
}


@pytest.mark.parametrize("ansi", ["false", "true"])
@pytest.mark.parametrize("data_type", sorted(EXTREMES))
def test_ranges_at_both_ends_of_the_type(spark: SparkSession, data_type: str, ansi: str) -> None:
    session = spark.newSession()  # its own SQL confs
    session.conf.set("spark.sql.ansi.enabled", ansi)
    low, high = EXTREMES[data_type]
    keys = [low, low + 1, high - 1, high, None]
    values = ", ".join(f"(cast({'null' if k is None else k} as {data_type}))" for k in keys)
    changes = f"(select * from values {values} as changes(k))"

    rows = [row.asDict() for row in session.sql(key_ranges_sql(changes, "k", 4)).collect()]

    # the null key and the lowest key start groups (no gap before them), and the one gap wider
    # than 1: between low + 1 and high - 1
    assert target_predicate("t.k", rows) == (
        f"(t.k between {low} and {low + 1} or t.k between {high - 1} and {high} or t.k is null)"
    )
