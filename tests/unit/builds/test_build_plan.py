"""A build's plan takes a view stream's rebuild offer and its known column ranges only when
the model's rows over the view are the target's, and reconciliation follows a RESTORE except
on a full refresh (no JVM: fake history, the model's SQL run on sqlglot's executor)."""

import sqlglot
from sqlglot.executor import execute

from dbt.adapters.spark_streams.streams.builds.build import (
    ColumnRanges,
    RebuildOffer,
    StreamBuild,
    begin,
    covers,
    plan,
    write_confs,
)
from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.offsets.commit import BuildCommit
from dbt.adapters.spark_streams.streams.sql.run import Row
from tests.unit.offsets.test_registry import record

CONSUMER = "model.shop.orders_mirror"
TARGET = "`shop`.`orders_mirror`"
MIRROR = ConsumerConfig.from_model_config("orders_mirror", {"unique_key": "id"})
MERGE = ConsumerConfig.from_model_config(
    "orders_mirror", {"unique_key": "id", "incremental_strategy": "merge"}
)
STREAM_SQL = "(select id, customer_id, metadata_action from changes)"
ROWS_SQL = "(select id, customer_id, 'INSERT' as metadata_action from view_rows)"
MODEL = f"select id, customer_id from {STREAM_SQL} s where metadata_action = 'INSERT'"
OFFER = RebuildOffer("v", "the view's changes outsize its rows", STREAM_SQL, ROWS_SQL)
RANGES = ColumnRanges("v", "customer_id", [{"low": 1, "high": 9, "has_null": False}])


def view_build(*streams: str, moves: bool = True, **fields: object) -> StreamBuild:
    """A build of an existing target that read `streams` (the view stream `v` by default)."""
    reads = {name: (record(name, 1), "sql") for name in streams or ("v", "v@orders")}
    return StreamBuild(  # type: ignore[arg-type]
        CONSUMER, "shop", TARGET, True, False, True, moves=moves, reads=reads, **fields
    )


def test_a_stream_covers_the_view_stream_and_its_table_streams_only() -> None:
    assert covers("v", "v") and covers("v", "v@orders")
    assert not covers("v", "orders") and not covers("v", "vx") and not covers("v", "w@v")
    assert OFFER.covers("v@customers") and not OFFER.covers("customers")


def test_a_mirror_of_one_view_stream_takes_its_rebuild_offer() -> None:
    build = view_build(rebuild_offer=OFFER)
    decided = plan(MIRROR, build, True, False, MODEL)
    assert decided.rebuild is True and decided.has_changes is False
    assert decided.rebuild_offer == OFFER and not decided.drop_existing
    assert decided.keeps_table  # overwritten, not replaced: its followers keep its table id
    assert build.rebuilt_because == "the view's changes outsize its rows"


def test_the_taken_offer_puts_the_views_rows_in_place_of_its_changes() -> None:
    """The model's SQL for the write reads the view's rows, not the change set."""
    decided = plan(MIRROR, view_build(rebuild_offer=OFFER), True, False, MODEL)
    tables = {
        "changes": [{"id": 1, "customer_id": 7, "metadata_action": "INSERT"}],
        "view_rows": [{"id": 2, "customer_id": 8}, {"id": 3, "customer_id": 9}],
    }
    rows = execute(sqlglot.parse_one(decided.model_sql(MODEL), read="spark"), tables=tables).rows
    assert sorted(rows) == [(2, 8), (3, 9)]
    incremental = plan(MIRROR, view_build(), True, False, MODEL)
    assert incremental.model_sql(MODEL) == MODEL


def offer_refused(consumer: ConsumerConfig, build: StreamBuild, sql: str = MODEL) -> None:
    decided = plan(consumer, build, True, False, sql)
    assert decided.rebuild is False and decided.has_changes is build.has_write
    assert decided.rebuild_offer is None and build.rebuilt_because == ""


def test_the_offer_is_left_for_another_strategy_or_another_stream() -> None:
    offer_refused(MERGE, view_build(rebuild_offer=OFFER))
    # a mirror whose MERGE keeps some of the target's values, which a rebuild would overwrite
    for setting in (
        {"merge_exclude_columns": ["first_seen"]},
        {"merge_update_columns": ["status"]},
        {"incremental_predicates": ["DBT_INTERNAL_DEST.id > 0"]},
    ):
        kept = ConsumerConfig.from_model_config("orders_mirror", {"unique_key": "id", **setting})
        offer_refused(kept, view_build(rebuild_offer=OFFER))
    offer_refused(MIRROR, view_build("v", "orders", rebuild_offer=OFFER))


def test_the_offer_is_left_unless_the_model_reads_the_stream_sql_once() -> None:
    offer_refused(MIRROR, view_build(rebuild_offer=OFFER), "select 1")
    twice = f"{MODEL} union all select id, customer_id from {STREAM_SQL} t"
    offer_refused(MIRROR, view_build(rebuild_offer=OFFER), twice)


def test_the_offer_is_left_when_nothing_is_pending() -> None:
    offer_refused(MIRROR, view_build(moves=False, rebuild_offer=OFFER))


def test_a_rebuild_for_another_reason_does_not_take_the_offer() -> None:
    build = view_build(rebuild_offer=OFFER)
    decided = plan(MIRROR, build, True, True, MODEL)  # --full-refresh
    assert decided.rebuild is True and decided.rebuild_offer is None
    assert build.rebuilt_because == ""


def test_the_known_ranges_pass_to_a_model_that_passes_the_column_through() -> None:
    build = view_build(column_ranges=RANGES)
    decided = plan(MIRROR, build, True, False, MODEL)
    assert decided.has_changes and build.target_ranges is RANGES


def ranges_taken(build: StreamBuild, sql: str = MODEL, exists: bool | None = True) -> object:
    plan(MIRROR, build, exists, False, sql)
    return build.target_ranges


def test_the_known_ranges_stay_with_the_view_stream_otherwise() -> None:
    assert ranges_taken(view_build("v", "orders", column_ranges=RANGES)) is None
    grouped = f"select customer_id, count(*) from {STREAM_SQL} group by customer_id"
    assert ranges_taken(view_build(column_ranges=RANGES), grouped) is None
    assert ranges_taken(view_build(column_ranges=RANGES), exists=None) is None  # a rebuild
    assert ranges_taken(view_build()) is None  # none known


def test_the_changes_are_broadcast_when_the_history_bounds_them_small() -> None:
    def broadcast(change_rows: int | None, limit: int = 100) -> bool:
        consumer = ConsumerConfig.from_model_config(
            "m", {"unique_key": "id", "broadcast_change_rows": limit}
        )
        return plan(consumer, view_build(change_rows=change_rows), True, False).broadcast_changes

    assert broadcast(1) and broadcast(100)
    assert not broadcast(101) and not broadcast(0) and not broadcast(None)
    assert not broadcast(1, limit=0)


def test_one_row_per_file_is_a_cap_too() -> None:
    assert write_confs(1) == {"spark.sql.files.maxRecordsPerFile": "1"}


class RestoredTarget:
    """A target RESTOREd to version 2, undoing the consumer's build at version 3."""

    def __init__(self) -> None:
        builds = {
            v: BuildCommit(CONSUMER, f"b{v}", v, (record("orders_mirror__orders", v, 10 * v),))
            for v in (1, 2, 3)
        }
        self.history: list[Row] = [
            {"version": 4, "operation": "RESTORE", "operationParameters": {"version": "2"}},
            *(
                {"version": v, "operation": "MERGE", "userMetadata": c.user_metadata()}
                for v, c in sorted(builds.items(), reverse=True)
            ),
        ]

    def run(self, sql: str) -> list[Row]:
        assert sql.startswith(f"describe history {TARGET}")
        depth = int(sql.rsplit(" ", 1)[1]) if " limit " in sql else len(self.history)
        return self.history[:depth]


def test_begin_resumes_a_restored_target_from_the_commit_its_rows_are_at() -> None:
    build = begin(RestoredTarget().run, view_build())
    assert [r.offset_version for r in build.committed] == [20]
    assert build.last_txn_version == 3  # above every version Delta may have seen applied


def test_a_full_refresh_does_not_follow_the_restore() -> None:
    refresh = view_build()
    refresh.full_refresh = True
    build = begin(RestoredTarget().run, refresh)
    assert [r.offset_version for r in build.committed] == [30]
    assert build.last_txn_version == 3
