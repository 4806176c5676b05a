"""changes() on a view, on the fake shop of test_view_stream (no JVM): each base table read
between the states a moment or a view stream's offsets name, append_only, --empty, and the
points a view refuses."""

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
import sqlglot
from sqlglot import exp

from dbt.adapters.spark_streams.streams.delta.schema_changes import RETRY_ACROSS_MARKER
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest
from dbt.adapters.spark_streams.streams.travel.changes_on_views import view_changes_sql
from tests.unit.frozen_clock import freeze_staleness_clock
from tests.unit.kinds.test_view import NAME, T0, Shop, offsets


@pytest.fixture(autouse=True)
def _a_day_after_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_staleness_clock(monkeypatch, T0 + timedelta(days=1))


AT_1 = (T0 + timedelta(minutes=1, seconds=30)).strftime("%Y-%m-%d %H:%M:%S")


def view_changes(streams: dict[str, StreamRecord] | None = None, **arguments) -> str:
    request = ChangesRequest("shop", "paired", **arguments)
    return view_changes_sql(Shop(), {}, (streams or {}).get, request)


def test_between_two_moments_each_table_is_read_between_its_states() -> None:
    sql = view_changes(at={"timestamp": AT_1}, unique_key=("id",))
    assert "FROM TABLE_CHANGES('`shop`.`orders`', 2, 3)) AS `o` JOIN " in sql
    assert "(SELECT * FROM `shop`.`customers` VERSION AS OF 1) AS `c`" in sql
    assert "FROM TABLE_CHANGES('`shop`.`customers`', 2, 3)) AS `c`" in sql
    assert "metadata_isupdate" in sql and "sha1(to_json(named_struct('id'" in sql


def test_before_a_moment_and_an_end() -> None:
    end = (T0 + timedelta(minutes=2)).strftime("%Y-%m-%d %H:%M:%S")
    sql = view_changes(before={"timestamp": AT_1}, end={"timestamp": end})
    assert "FROM TABLE_CHANGES('`shop`.`orders`', 2, 2)) AS `o`" in sql
    assert "(SELECT * FROM `shop`.`orders` VERSION AS OF 2) AS `o` JOIN" in sql


def test_from_a_view_streams_offsets() -> None:
    sql = view_changes(streams=offsets(2), at={"stream": NAME})
    assert "FROM TABLE_CHANGES('`shop`.`orders`', 3, 3)) AS `o`" in sql
    assert "(SELECT * FROM `shop`.`customers` VERSION AS OF 2) AS `c`" in sql


def test_append_only_reads_the_inserts() -> None:
    sql = view_changes(at={"timestamp": AT_1}, information="append_only")
    assert "_change_type = 'insert'" in sql
    assert "'INSERT' as metadata_action" in sql
    assert "update_postimage" not in sql


def test_nothing_between_equal_points_reads_no_change() -> None:
    sql = view_changes(at={"timestamp": AT_1}, end={"timestamp": AT_1})
    assert "TABLE_CHANGES" not in sql.upper() and " where false" in sql


def empty_view_changes_sql(shop: Shop, request: ChangesRequest) -> str:
    return view_changes_sql(shop, {}, lambda _: None, replace(request, empty=True))


def test_empty_gives_the_columns_and_no_rows() -> None:
    request = ChangesRequest("shop", "paired", at={"timestamp": AT_1}, unique_key=("ID",))
    shop = Shop()
    sql = empty_view_changes_sql(shop, request)
    assert sql.startswith("select * from (select `id`, ")
    assert "from (select * from `shop`.`paired`) as _snapshot" in sql
    assert sql.endswith(" where false")
    assert not any("history" in statement for statement in shop.statements)


@pytest.mark.parametrize("which", ["at", "before", "end"])
def test_a_version_point_is_refused(which: str) -> None:
    points = {"at": {"timestamp": AT_1}, which: {"version": 2}}
    with pytest.raises(StreamError) as raised:
        view_changes(**points)
    assert raised.value.msg == (
        f"changes(shop.paired): {which}={{'version': ...}} names a version of one table, and "
        "a view has none of its own; give {'timestamp': 'YYYY-MM-DD HH:MM:SS'} (every table "
        "as of that time) or, for at=, {'stream': name} (a view stream's offsets)."
    )


def test_an_unknown_information_is_refused_before_reading() -> None:
    with pytest.raises(StreamError, match="information='all' is not one of"):
        view_changes(at={"timestamp": AT_1}, information="all")
    with pytest.raises(StreamError, match="information='all' is not one of"):
        empty_view_changes_sql(Shop(), ChangesRequest("shop", "paired", information="all"))


def test_a_key_the_view_lacks_is_named() -> None:
    with pytest.raises(StreamError) as raised:
        view_changes(at={"timestamp": AT_1}, unique_key=("region",))
    assert raised.value.msg.startswith(
        "changes(shop.paired): unique_key column(s) region not in view shop.paired"
    )


def test_the_default_information_nets_updates() -> None:
    sql = view_changes(at={"timestamp": AT_1})
    assert "update_postimage" in sql and "_change_type = 'insert'" not in sql


@pytest.mark.parametrize("empty", [False, True])
def test_a_view_the_algebra_cannot_follow_is_refused_naming_the_call(empty: bool) -> None:
    shop = Shop(view="select id, count(*) as n from orders group by id")
    request = ChangesRequest("shop", "paired", at={"timestamp": AT_1}, empty=empty)
    with pytest.raises(StreamError) as raised:
        view_changes_sql(shop, {}, lambda _: None, request)
    assert raised.value.msg.startswith("changes(shop.paired): view shop.paired uses GROUP BY;")


def test_empty_refuses_a_key_the_view_lacks() -> None:
    request = ChangesRequest("shop", "paired", unique_key=("region",))
    with pytest.raises(StreamError) as raised:
        empty_view_changes_sql(Shop(), request)
    assert raised.value.msg.startswith(
        "changes(shop.paired): unique_key column(s) region not in view shop.paired"
    )


def test_empty_is_typed_as_a_change_feed() -> None:
    """The commit version is a bigint literal, the commit time a timestamp Spark can read."""
    sql = empty_view_changes_sql(Shop(), ChangesRequest("shop", "paired"))
    select = sqlglot.parse_one(sql, read="spark").find(exp.Select, bfs=False)
    inner = next(s for s in select.find_all(exp.Select) if s.selects[0].alias_or_name == "id")
    columns = {column.alias: column.this for column in inner.selects if column.alias}
    version = columns["metadata_commit_version"]
    assert isinstance(version, exp.Cast) and version.to.sql() == "BIGINT"
    assert version.this.is_int
    stamp = columns["metadata_commit_timestamp"]
    assert isinstance(stamp, exp.Cast) and stamp.to.sql().startswith("TIMESTAMP")
    assert datetime.fromisoformat(stamp.this.name)


def test_before_a_view_stream_is_refused_naming_the_views_call() -> None:
    """before= takes no stream: refused as the user wrote it, before any table is read."""
    with pytest.raises(StreamError) as raised:
        view_changes(streams=offsets(2), before={"stream": NAME})
    assert raised.value.msg == (
        "changes(shop.paired): before= takes {'timestamp': 'YYYY-MM-DD HH:MM:SS'} on a view "
        f"(every table as of that time), not {{'stream': '{NAME}'}}; a view stream's offsets "
        "are a start point: give them as at=."
    )


def test_base_tables_in_another_schema_are_read_there() -> None:
    shop = Shop(view="select o.id from raw.orders o join customers c on o.id = c.id")
    shop.tables = {"raw.orders": "delta", "shop.customers": "delta"}
    request = ChangesRequest("shop", "paired", at={"timestamp": AT_1})
    sql = view_changes_sql(shop, {}, lambda _: None, request)
    assert "FROM TABLE_CHANGES('`raw`.`orders`', 2, 3)) AS `o`" in sql
    assert "describe history `raw`.`orders`" in shop.statements


def test_a_write_in_a_tables_interval_marks_the_read_for_a_retry_across_evolution() -> None:
    """Each table's interval holds WRITEs, which may have evolved its schema unseen: the
    statement carries the marker on which it runs again with Delta's check off."""
    assert view_changes(at={"timestamp": AT_1}).startswith(f"{RETRY_ACROSS_MARKER} ")
    unmarked = view_changes(at={"timestamp": AT_1}, end={"timestamp": AT_1})
    assert RETRY_ACROSS_MARKER not in unmarked  # nothing read: nothing to retry
