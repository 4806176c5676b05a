"""The view as a stream kind, on test_view's fake shop (no JVM): a view stream's status, the
records a build writes for the view and each base table, the rows of a first build, a start
point applied to every table, and the stream named in what is refused."""

import re
from dataclasses import replace
from datetime import timedelta

import pytest

from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.view import VIEW
from dbt.adapters.spark_streams.streams.offsets.registry import Registry
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition
from tests.unit.frozen_clock import freeze_staleness_clock
from tests.unit.kinds.test_view import (
    CONSUMER,
    NAME,
    T0,
    Shop,
    build,
    history_row,
    offsets,
    resolve,
)

GROUPED = "select id, count(*) as n from orders group by id"


@pytest.fixture(autouse=True)
def _a_day_after_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_staleness_clock(monkeypatch, T0 + timedelta(days=1))


def status(shop: Shop) -> dict:
    return VIEW.status(shop, Registry(shop, "analytics"), offsets(1)[NAME])


def test_a_view_stream_is_fresh_until_its_view_is_redefined_or_invalid() -> None:
    assert status(Shop()) == {"stale": False, "stale_after": None, "stale_reason": ""}
    redefined = Shop(view="select c.id from customers c join orders o on o.id = c.id")
    assert status(redefined) == {
        "stale": True,
        "stale_after": None,
        "stale_reason": "view shop.paired (or a view it reads) was redefined",
    }
    invalid = status(Shop(view=GROUPED))
    assert invalid["stale"] and invalid["stale_after"] is None
    assert invalid["stale_reason"].startswith(f"Stream {NAME}: view shop.paired uses GROUP BY;")


class ShopListingItsView(Shop):
    """The shop whose schema lists the view shop.paired."""

    def __call__(self, sql: str) -> list[Row]:
        if sql == "show views in `shop` like 'paired'":
            return [{"viewName": "paired"}]
        return super().__call__(sql)


def test_the_kind_claims_views() -> None:
    """(What a dropped view stream takes with it: tests/unit/status/test_streams.py.)"""
    shop = ShopListingItsView()
    shop_view = CatalogEntry(shop, "shop", "paired")
    assert VIEW.claims(shop_view, None) is True
    assert VIEW.claims(CatalogEntry(shop, "shop", "orders"), "standard") is False


def test_changes_on_a_view_from_a_view_streams_offsets() -> None:
    shop = Shop()
    request = ChangesRequest("shop", "paired", at={"stream": NAME})
    sql = VIEW.changes(shop, {}, offsets(2).get, request, CatalogEntry(shop, "shop", "paired"))
    assert "FROM TABLE_CHANGES('`shop`.`orders`', 3, 3)) AS `o`" in sql


def test_a_view_the_algebra_cannot_follow_is_refused_naming_the_stream() -> None:
    with pytest.raises(StreamError) as raised:
        resolve(Shop(view=GROUPED), build(exists=False))
    assert raised.value.msg.startswith(f"Stream {NAME}: view shop.paired uses GROUP BY;")


@pytest.mark.parametrize("start_at", [True, False])
def test_a_version_start_is_refused_naming_the_point(start_at: bool) -> None:
    which = "at" if start_at else "before"
    with pytest.raises(StreamError) as raised:
        resolve(Shop(), build(exists=False), start={"version": 1}, start_at=start_at)
    assert raised.value.msg == (
        f"Stream {NAME}: {which}={{'version': ...}} names a version of one table, and view "
        f"shop.paired has none of its own; give {which}={{'timestamp': 'YYYY-MM-DD HH:MM:SS'}} "
        "(every base table as of that time)."
    )


def test_the_records_a_first_build_writes() -> None:
    """The view's record keeps the key as the view spells it; each table stream is a
    standard, unkeyed stream on its table."""
    the_build = build(exists=False)
    resolve(Shop(), the_build, unique_key=("ID",))
    own = the_build.reads[NAME][0]
    assert own.unique_key == ("id",)
    for table in ("orders", "customers"):
        record = the_build.reads[f"{NAME}@shop.{table}"][0]
        assert (record.source_table, record.mode, record.unique_key) == (
            f"`shop`.`{table}`",
            "standard",
            (),
        )
        assert record.source_id == f"id-{table}"
    assert the_build.change_rows is None  # the tables' changes join in full: no bound


class CountedShop(Shop):
    """The shop whose every commit wrote five rows (WRITE's numOutputRows)."""

    def __call__(self, sql: str) -> list[Row]:
        rows = super().__call__(sql)
        if sql.startswith("describe history"):
            return [{**row, "operationMetrics": {"numOutputRows": "5"}} for row in rows]
        return rows


def test_a_view_of_one_table_is_bounded_by_that_tables_change_rows() -> None:
    """Each row of the table's change is at most one of the view's (a view stream refuses
    generator functions), so its bound stands; two tables join each other's rows in full."""
    one = "select o.id from orders o where o.id > 0"
    fingerprint = read_view_definition(CountedShop(one), "shop", "paired", NAME).fingerprint
    single = build()
    resolve(CountedShop(one, stored=offsets(1, fingerprint)), single)
    assert single.change_rows == 10  # versions 2 and 3, five rows each
    paired = build()
    resolve(CountedShop(stored=offsets(1)), paired)
    assert paired.change_rows is None


def test_a_later_build_keeps_the_streams_creation_time() -> None:
    stored = offsets(1)
    the_build = build()
    resolve(Shop(stored=stored), the_build)
    own = the_build.reads[NAME][0]
    assert own.created_on == stored[NAME].created_on
    assert own.txn_version == stored[NAME].txn_version


def test_a_first_builds_rows_are_the_views_rows_at_the_pins_keyed() -> None:
    sql = resolve(Shop(), build(exists=False))
    assert not sql.endswith(" where false")
    assert "cast(3 as bigint) as metadata_commit_version" in sql
    assert "timestamp'2026-11-24 09:03:00.000000' as metadata_commit_timestamp" in sql
    assert "sha1(to_json(named_struct('id', `id`), map('ignoreNullFields', 'false')))" in sql


@pytest.mark.parametrize(("start_at", "first"), [(True, 2), (False, 1)])
def test_a_moment_at_a_commit_names_the_state_with_or_without_it(
    start_at: bool, first: int
) -> None:
    moment = (T0 + timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M:%S")
    sql = resolve(Shop(), build(exists=False), start={"timestamp": moment}, start_at=start_at)
    assert f"FROM TABLE_CHANGES('`shop`.`orders`', {first}, 3)) AS `o`" in sql


class ShopWithOlderCustomers(Shop):
    """The shop whose customers table was last written at version 2."""

    def __call__(self, sql: str) -> list[Row]:
        rows = super().__call__(sql)
        if sql.startswith("describe history `shop`.`customers`"):
            return [history_row(version) for version in range(2, -1, -1)][: len(rows)]
        return rows


def test_the_views_own_offset_is_the_newest_pin() -> None:
    the_build = build(exists=False)
    resolve(ShopWithOlderCustomers(), the_build)
    own = the_build.reads[NAME][0]
    assert (own.offset_version, own.offset_timestamp) == (3, T0 + timedelta(minutes=3))
    assert the_build.reads[f"{NAME}@shop.customers"][0].offset_version == 2


def test_a_dry_run_reads_no_registry() -> None:
    shop = Shop(stored=offsets(1))
    resolve(shop, build(dry_run="--empty"))
    assert not any("dbt_streams_log" in statement for statement in shop.statements)


def test_a_view_stream_taken_over_from_a_consumer_gone_starts_at_the_pins() -> None:
    stored = offsets(1)
    stored[NAME] = replace(stored[NAME], consumer="model.shop.gone")
    the_build = build(exists=False, project_consumers=(CONSUMER,))
    sql = resolve(Shop(stored=stored), the_build)
    assert "TABLE_CHANGES" not in sql.upper()  # the view's rows at the pins, as a new stream's
    assert the_build.reads[NAME][0].consumer == CONSUMER
    assert the_build.warnings[0].startswith(f"Stream {NAME}: taken over by {CONSUMER} from ")


class RangedShop(Shop):
    """The shop whose change sets' keys run from 2 to 5 (the key_ranges query's answer)."""

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("with keys as (select distinct "):
            self.statements.append(sql)
            return [{"low": 2, "high": 5, "has_null": False}]
        return super().__call__(sql)


def ranged_build(exists: bool = True, **fields):
    config = ConsumerConfig.from_model_config(CONSUMER, {"unique_key": "id", "key_ranges": True})
    return build(exists=exists, config=config, **fields)


def test_key_ranges_prune_the_other_tables_scan_to_the_changed_keys() -> None:
    sql = resolve(RangedShop(stored=offsets(1)), ranged_build())
    assert sql.count("`id` BETWEEN 2 AND 5") == 2  # each change term prunes the other table


def test_a_build_reading_no_changes_asks_no_key_ranges() -> None:
    for shop, the_build in (
        (RangedShop(), ranged_build(exists=False)),
        (RangedShop(stored=offsets(1)), ranged_build(dry_run="--empty")),
    ):
        sql = resolve(shop, the_build)
        assert "BETWEEN 2 AND 5" not in sql
        assert not any(s.startswith("with keys as") for s in shop.statements)


class SizedShop(Shop):
    """The shop whose tables hold 1,000 bytes each (DESCRIBE DETAIL's sizeInBytes)."""

    def __call__(self, sql: str) -> list[Row]:
        rows = super().__call__(sql)
        if sql.startswith("describe detail"):
            return [{**row, "sizeInBytes": 1000} for row in rows]
        return rows


def rebuild_build(incremental: str = "auto", exists: bool = True):
    settings = {"unique_key": "id", "key_ranges": False, "rebuild_min_bytes": 1}
    config = ConsumerConfig.from_model_config(CONSUMER, {**settings, "incremental": incremental})
    return build(exists=exists, config=config)


def test_a_change_scanning_the_whole_view_is_offered_as_a_rebuild() -> None:
    the_build = rebuild_build()
    sql = resolve(SizedShop(stored=offsets(1)), the_build)
    offer = the_build.rebuild_offer
    assert (offer.stream, offer.stream_sql) == (NAME, sql)
    assert "TABLE_CHANGES" not in offer.rows_sql.upper()
    assert "(SELECT * FROM `shop`.`orders` VERSION AS OF 3) AS `o`" in offer.rows_sql
    first_build = rebuild_build(exists=False)
    resolve(SizedShop(), first_build)
    assert first_build.rebuild_offer is None  # a first build reads the view's rows anyway


def test_a_strict_model_refuses_the_rebuild_naming_the_stream() -> None:
    with pytest.raises(StreamError) as raised:
        resolve(SizedShop(stored=offsets(1)), rebuild_build("strict"))
    assert raised.value.msg.startswith(
        f"Model {CONSUMER}: stream {NAME} on view shop.paired would be cheaper to rebuild: "
    )


def test_a_first_build_from_a_moment_reads_changes_but_offers_no_rebuild() -> None:
    the_build = rebuild_build(exists=False)
    moment = (T0 + timedelta(minutes=1, seconds=30)).strftime("%Y-%m-%d %H:%M:%S")
    sql = resolve(SizedShop(), the_build, start={"timestamp": moment}, start_at=True)
    assert "TABLE_CHANGES('`shop`.`orders`', 2, 3)" in sql
    assert the_build.rebuild_offer is None


def test_an_append_only_view_streams_tables_are_read_as_standard_streams() -> None:
    the_build = build()
    sql = resolve(Shop(stored=offsets(1)), the_build, mode="append_only")
    filters = set(re.findall(r"WHERE `_change_type` (= '\w+'|IN \([^)]*\))", sql))
    assert filters == {"= 'insert'", "IN ('insert')"}  # no delete or pre-image is read
    assert the_build.reads[NAME][0].mode == "append_only"
    for table in ("orders", "customers"):
        assert the_build.reads[f"{NAME}@shop.{table}"][0].mode == "standard"


def test_an_empty_run_reads_the_view_dbt_made_over_limit_0_inputs_unchecked() -> None:
    """Under --empty dbt makes a view model over `limit 0` inputs; the dry run reads it as it
    stands (no rows, the stream's columns). --sample checks it as a build does."""
    limited = "select * from (select * from orders where false limit 0) _dbt_limit_subq_orders"
    sql = resolve(Shop(view=limited, stored=offsets(1)), build(dry_run="--empty"))
    assert sql.startswith("select * from (select `id`") and sql.endswith(" where false")
    with pytest.raises(StreamError, match=r"view shop\.paired uses LIMIT"):
        resolve(Shop(view=limited, stored=offsets(1)), build(dry_run="--sample"))
