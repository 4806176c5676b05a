"""A materialized view's build decision: refresh fully or through its stream, rebuild or not."""

import json

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.mv.plan import (
    CONFIG_FINGERPRINT,
    FINGERPRINT,
    RECOMPUTE_KEYS,
    RECOMPUTES_INPUT,
    REFRESH_PATH,
    Configuration,
    columns_changed,
    plan_materialized_view,
)

MART = "select region, count(*) as orders, sum(amount) as revenue from shop.orders group by region"
WINDOW = "select id,\n  rank() over (order by amount) as place\nfrom shop.orders"


def plan(
    sql: str = MART, refresh: str = "auto", built_from: str | None = None, full: bool = False
):
    return plan_materialized_view("mart", sql, refresh, built_from, full, lambda name: True)


def test_a_first_build_rebuilds_and_a_later_one_with_the_same_definition_refreshes() -> None:
    first = plan()
    assert first.incremental and first.rebuild
    assert first.input_name == "mart__mv_input"
    assert first.input_sql == "select region as _mv_c0, amount as _mv_c1 FROM shop.orders"
    assert first.properties == {
        FINGERPRINT: first.fingerprint,
        CONFIG_FINGERPRINT: "",
        REFRESH_PATH: "incremental: its aggregates are kept from the change",
        RECOMPUTES_INPUT: "false",
        RECOMPUTE_KEYS: "[]",
    }
    later = plan(built_from=first.fingerprint)
    assert later.incremental and not later.rebuild
    assert plan(built_from=first.fingerprint, full=True).rebuild  # --full-refresh


def test_a_changed_query_rebuilds_and_a_reformatted_one_does_not() -> None:
    built = plan().fingerprint
    assert plan(MART.replace("sum(amount)", "max(amount)"), built_from=built).rebuild
    reformatted = MART.replace(" from ", "\n  FROM ").replace("count(*)", "COUNT(*)")
    assert not plan(reformatted, built_from=built).rebuild


def test_a_query_that_cannot_refresh_incrementally_refreshes_fully_and_says_why() -> None:
    full = plan(WINDOW)
    assert not full.incremental and full.reason == "a window function at line 2"
    assert full.path == "refreshes fully: a window function at line 2"
    assert plan(MART.replace("sum(amount)", "count(distinct amount)")).path == (
        "incremental: the groups the change touches are recomputed"
    )
    assert plan(MART.replace("sum(amount)", "max(amount)")).path == (
        "incremental: its aggregates are kept from the change, and a group whose MIN or MAX "
        "may have been deleted is recomputed"
    )
    assert full.properties == {}
    assert plan(MART, refresh="full").reason == "refresh: 'full'"


def test_a_refresh_that_recomputes_groups_reads_its_whole_input() -> None:
    """What the view stream's estimate counts: kept aggregates read only the change; a MIN or
    MAX (a deleted extremum), COUNT(DISTINCT) or HAVING recompute groups from the input, as an
    outer join's refresh always does (from its tables, with no view stream)."""
    assert not plan().recomputes_input
    for recomputing in (
        MART.replace("sum(amount)", "max(amount)"),
        MART.replace("sum(amount)", "min(amount)"),
        MART.replace("sum(amount)", "count(distinct amount)"),
        MART + " having count(*) > 1",
    ):
        built = plan(recomputing)
        assert built.recomputes_input, recomputing
        assert built.properties[RECOMPUTES_INPUT] == "true"
    joined = "select c.region, count(o.id) as orders from shop.customers c "
    joined += "left join shop.orders o on o.customer_id = c.id group by c.region"
    assert plan(joined).joined and plan(joined).recomputes_input
    assert not plan(WINDOW).recomputes_input


def test_a_recompute_reads_through_group_keys_that_are_source_columns() -> None:
    """The group keys whose ranges in the change may narrow a recompute's read of the input:
    those that are a source column as it is (the input names it `_mv_c<n>`); the build takes
    the first of an integer type."""
    extremes = "select o.customer_id, o.status, max(o.amount) as top from shop.orders o "
    keyed = plan(extremes + "group by o.customer_id, o.status")
    assert keyed.recompute_keys == (("_mv_c0", "customer_id"), ("_mv_c1", "status"))
    # kept in the table's properties for explain_stream's estimate
    assert json.loads(keyed.properties[RECOMPUTE_KEYS]) == [
        ["_mv_c0", "customer_id"],
        ["_mv_c1", "status"],
    ]
    bucketed = "select cast(id / 200 as bigint) as b, status, max(amount) as top from shop.orders "
    assert plan(bucketed + "group by cast(id / 200 as bigint), status").recompute_keys == (
        ("_mv_c1", "status"),
    )
    assert plan().recompute_keys == ()  # kept from the change: never recomputed
    joined = "select c.region, count(o.id) as orders from shop.customers c "
    joined += "left join shop.orders o on o.customer_id = c.id group by c.region"
    assert plan(joined).recompute_keys == ()  # an outer join's tables, no input view


def test_refresh_incremental_fails_with_the_construct_and_its_line() -> None:
    with pytest.raises(StreamError) as failed:
        plan(WINDOW, refresh="incremental")
    assert failed.value.msg == (
        "Model mart cannot refresh incrementally: a window function at line 2. Rewrite that "
        "part of its query, or set refresh: 'auto' to refresh it fully when it runs."
    )
    with pytest.raises(
        StreamError, match="refresh 'sometimes' is not one of auto, incremental, full"
    ):
        plan(refresh="sometimes")


def configured(on_change: str, built: str | None = "old", now: str = "new"):
    built_from = plan().fingerprint
    return plan_materialized_view(
        "mart", MART, "auto", built_from, False, lambda name: True,
        Configuration(now=now, built=built, on_change=on_change),
    )  # fmt: skip


def test_a_changed_configuration_is_applied_continued_or_refused() -> None:
    applied = configured("apply")
    assert applied.rebuild and applied.properties[CONFIG_FINGERPRINT] == "new"
    continued = configured("continue")
    assert not continued.rebuild
    assert continued.warning.startswith("Model mart: its configuration changed since its table")
    with pytest.raises(
        StreamError, match="on_configuration_change is 'fail', so nothing was written"
    ):
        configured("fail")
    with pytest.raises(StreamError, match="on_configuration_change 'never' is not one of apply"):
        configured("never")


def test_an_unchanged_or_unknown_configuration_changes_nothing() -> None:
    assert not configured("fail", built="same", now="same").rebuild
    assert not configured("fail", built=None).rebuild  # a table built before it was kept


def test_a_refresh_reads_its_target_once_unless_groups_are_recomputed() -> None:
    """Kept aggregates: the MERGE's source is the change's deltas alone, and its clauses add
    them to the target's row; a recomputed group (MIN) joins the target into the source and
    needs the MERGE's own guard join."""
    names = ["region", "orders", "revenue"]
    sql = plan().refresh_sql("changes", "shop.mart", names, "rows")
    assert sql.count("shop.mart") == 1  # the MERGE's target only
    assert sql.startswith("merge into shop.mart as t using (select _mv_k0, sum(")
    assert "when matched and t._mv_rows + s._d_rows <= 0 then delete" in sql
    assert "when not matched and s._d_rows > 0 then insert" in sql
    assert "rows" not in sql.replace("_rows", "")  # the input's rows are never read
    total = "select count(*) as orders, sum(amount) as revenue from shop.orders"
    once = plan(sql=total).refresh_sql("changes", "shop.mart", ["orders", "revenue"], "rows")
    assert " on true when matched then update set " in once  # its one row is never deleted
    assert "delete" not in once and "when not matched and true then insert" in once
    extremum = "select region, min(amount) as least from shop.orders group by region"
    recomputed = plan(sql=extremum).refresh_sql(
        "changes", "shop.mart", ["region", "least"], "rows"
    )
    assert recomputed.count("shop.mart") == 3
    assert "where c._mv_keep or o._mv_rows is not null" in recomputed


def test_a_query_whose_columns_differ_from_its_table_says_what_differs() -> None:
    table = [("customer_id", "int"), ("largest", "int"), ("_mv_rows", "bigint")]
    assert columns_changed([("customer_id", "int"), ("LARGEST", "INT")], table) == ""
    assert columns_changed([("customer_id", "int"), ("largest", "bigint")], table) == (
        "largest from int to bigint"
    )
    assert columns_changed([("customer_id", "int"), ("top", "int")], table) == (
        "top added, largest gone"
    )
