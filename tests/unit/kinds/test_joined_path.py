"""explain_stream's path for a materialized view over an outer join, without a JVM: its
table streams' offsets against their tables' latest versions, and the estimate from the
tables' sizes (views/cost.py's recompute_cost)."""

from dataclasses import replace

from dbt.adapters.spark_streams.streams.kinds.view_path import explain_joined_path
from dbt.adapters.spark_streams.streams.sql.run import Row
from tests.unit.kinds.test_view_path import config
from tests.unit.offsets.test_registry import record


def joined_run(latest: dict[str, int], sizes: dict[str, int]):
    """A catalog of Delta tables at their `latest` versions, with `sizes` in bytes."""

    def run(sql: str) -> list[Row]:
        table = sql.split()[2]
        if sql.startswith("describe history"):
            return [{"version": latest[table], "timestamp": None}]
        assert sql.startswith("describe detail"), sql
        return [{"sizeInBytes": sizes[table]}]

    return run


def test_an_outer_joins_path_is_estimated_from_its_tables_sizes() -> None:
    """A materialized view over an outer join: nothing pending, incremental under the model's
    rebuild_min_bytes, else a full refresh (or a failure under refresh: 'incremental')."""
    streams = [
        replace(record(f"revenue@raw.{name}", 1, offset=3), source_table=f"`raw`.`{name}`")
        for name in ("customers", "orders")
    ]
    sizes = {"`raw`.`customers`": 100, "`raw`.`orders`": 1000}
    mv = replace(config(rebuild_min_bytes=1100), materialized_view=True)
    idle = joined_run({"`raw`.`customers`": 3, "`raw`.`orders`": 3}, sizes)
    assert explain_joined_path(idle, streams, mv).startswith("none (nothing pending")
    changed = joined_run({"`raw`.`customers`": 3, "`raw`.`orders`": 5}, sizes)
    assert explain_joined_path(changed, streams, mv) == (
        "rebuild (the change would scan 109% of what a rebuild scans (1.2 KiB of 1.1 KiB), "
        "recomputing groups from the whole input)"
    )
    strict = replace(mv, incremental="strict")
    assert explain_joined_path(changed, streams, strict).startswith(
        "fail, as the model's refresh is 'incremental' (the change would scan 109%"
    )
    small = replace(mv, rebuild_min_bytes=1101)
    assert explain_joined_path(changed, streams, small) == (
        "incremental (its tables hold 1.1 KiB, under the model's rebuild_min_bytes of 1.1 KiB)"
    )


def test_empty_tables_estimated_stay_incremental_as_the_build_does() -> None:
    """A cost that does not make the rebuild cheaper (no bytes at all) is no rebuild."""
    streams = [replace(record("revenue@raw.orders", 1, offset=3), source_table="`raw`.`orders`")]
    empty = joined_run({"`raw`.`orders`": 4}, {"`raw`.`orders`": 0})
    mv = replace(config(rebuild_min_bytes=0), materialized_view=True)
    assert explain_joined_path(empty, streams, mv).startswith("incremental (the change would")
