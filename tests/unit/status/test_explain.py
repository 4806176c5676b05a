"""explain_stream's report of a model, without a JVM: its heading, one line per table or file
stream, a view stream's tables, pruned reads and path, from the offsets of the target's last
stream commit, or the registry's when the target has none (or was built fresh).

The catalog is test_view_path.py's Costed (test_view.py's Shop, the view shop.paired over two
Delta tables at version 3, with sizes, scans and change sets); on top of it the registry's
view lists `registry` and the target's history holds `commit`.
"""

from dataclasses import replace

from dbt.adapters.spark_streams.streams.offsets.commit import BuildCommit
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.status.explain import explain_consumer
from tests.unit.kinds.test_view import CONSUMER, NAME, T0, as_row, offsets
from tests.unit.kinds.test_view_explain import PRUNE_LINE, SHOP_CHANGES
from tests.unit.kinds.test_view_path import CHEAPER, CUSTOMERS, ORDERS, Costed, config
from tests.unit.offsets.test_registry import record

TARGET = "`analytics`.`paired_mirror`"
HEADING = "paired_mirror (apply_changes, incremental: auto)"
NO_STREAMS = "  no streams yet: the next build creates the target and its streams"
# the model's own table stream, and another model's stream the report leaves out
TABLE_STREAM = replace(record("paired_mirror__orders", 4), consumer=CONSUMER)
OTHERS = record("other__orders", 4)


class Target(Costed):
    """Costed, whose registry lists `registry` and whose target's newest commit is `commit`."""

    def __init__(self, registry: list[StreamRecord], commit: BuildCommit | None = None) -> None:
        super().__init__({"orders": 1000, "customers": 1000}, {"customers": 1500}, SHOP_CHANGES)
        self.registry, self.commit = registry, commit

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith(f"describe history {TARGET}"):
            self.statements.append(sql)
            if self.commit is None:
                return []
            metadata = self.commit.user_metadata()
            return [
                {"version": 7, "timestamp": T0, "operation": "MERGE", "userMetadata": metadata}
            ]
        if sql == "select * from `analytics`.`dbt_streams`":
            return [as_row(stored) for stored in self.registry]
        return super().__call__(sql)


def view_streams(orders: int = 1) -> list[StreamRecord]:
    """The view stream's records, orders' table stream at `orders`, customers' at 3."""
    stored = offsets(3)
    stored[f"{NAME}@shop.orders"] = offsets(orders)[f"{NAME}@shop.orders"]
    return list(stored.values())


def explain(run: Target, target: str | None = TARGET, **settings) -> list[str]:
    consumer = config(**{"key_ranges": True, "rebuild_min_bytes": 0, **settings})
    return explain_consumer(run, Registry(run, "analytics"), CONSUMER, target, consumer)


VIEW_LINES = [
    f"stream {NAME} on view `shop`.`paired`:",
    f"  table {ORDERS}: offset version 1, latest version 3",
    f"  table {CUSTOMERS}: offset version 3, latest version 3",
    PRUNE_LINE,
]


def test_a_model_without_a_target_or_streams_has_none_yet() -> None:
    run = Target([*view_streams(), TABLE_STREAM])
    assert explain(run, target=None) == [HEADING, NO_STREAMS]
    assert not any(sql.startswith("describe history") for sql in run.statements)
    assert explain(Target([OTHERS])) == [HEADING, NO_STREAMS]
    strict = explain(Target([]), incremental="strict", incremental_strategy="merge")
    assert strict == ["paired_mirror (merge, incremental: strict)", NO_STREAMS]


def test_each_stream_of_the_model_is_explained_from_the_registry() -> None:
    run = Target([TABLE_STREAM, *view_streams(), OTHERS])
    assert explain(run) == [
        HEADING,
        "stream paired_mirror__orders on delta `raw`.`orders`: incremental (reads its changes "
        "after version 5)",
        *VIEW_LINES,
        f"  path: incremental ({CHEAPER}; only an apply_changes model that reads this one "
        "stream rebuilds)",
    ]
    assert f"describe history {TARGET} limit 1" in run.statements


def test_a_view_stream_read_alone_may_rebuild() -> None:
    assert explain(Target(view_streams())) == [
        HEADING,
        *VIEW_LINES,
        f"  path: rebuild ({CHEAPER})",
    ]


def test_the_targets_last_stream_commit_holds_the_offsets_that_count() -> None:
    """The registry lags a build whose commit landed: the commit says orders is at 3."""
    committed = BuildCommit(CONSUMER, "build-1", 4, tuple(view_streams(orders=3)))
    assert explain(Target(view_streams(), committed))[-1] == (
        "  path: none (nothing pending: the next build writes nothing)"
    )
    fresh = replace(committed, fresh_target=True)  # a new target: the registry's offsets
    assert explain(Target(view_streams(), fresh))[-1] == f"  path: rebuild ({CHEAPER})"
