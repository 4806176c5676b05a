"""The integration project as the cluster test builds it: a copy of it, and what its summary
(`print_shop_summary`) must show after the first build and after the build that consumes the
batch of changes."""

import re
import shutil
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2] / "integration_project"
RUNTIME_DIRS = ("target", "logs", "spark-warehouse", "metastore", "dbt_packages")
CUSTOMERS = 20
# The first build's summary and the batch of changes in one process (one cold start fewer):
# the summary is printed before the changes are applied.
SUMMARY_THEN_CHANGES = """
{% macro summary_then_changes() %}
  {% do print_shop_summary() %}
  {% do apply_shop_changes() %}
{% endmacro %}
"""
# Every relation after the first build of CUSTOMERS customers (dbt_streams_files aside).
FIRST_SUMMARY = {
    "shop_raw.customers": 20,
    "shop_raw.customer_cdc": 20,
    "shop_raw.order_events": 60,
    "shop_raw.order_items": 120,
    "shop_raw.orders": 60,
    "shop.country_regions": 4,
    "shop.customer_revenue": 20,
    "shop.customer_versions": 20,
    "shop.customers_mirror": 20,
    "shop.customers_pending_changes": 0,
    "shop.customers_history": 20,
    "shop.customers_cdc_current": 20,
    "shop.customers_cdc_current__cdc_tombstones": 0,
    "shop.customers_cdc_history": 20,
    "shop.customers_cdc_history__cdc_tombstones": 0,
    "shop.customers_snapshot": 20,
    "shop.current_customers": 20,
    # four table streams (one insert-only), a view stream with one table stream per base
    # table, the materialized view's three table streams (customers, orders, items) and the
    # Debezium feed's two insert-only streams
    "shop.dbt_streams": 12,
    "shop.dbt_streams_log": 12,
    "shop.order_events_log": 60,
    "shop.orders_audit": 60,
    "shop.order_customers_mirror": 60,
    "shop.orders_latest": 60,
    "shop.revenue_by_customer": 20,
    "shop.stg_customers": 20,
    "shop.stg_order_customers": 60,
    "shop.stg_orders": 60,
}


def copy_project(root: Path) -> Path:
    """A copy of the integration project under `root`, with summary_then_changes."""
    copy = root / "integration_project"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns(*RUNTIME_DIRS))
    (copy / "macros" / "summary_then_changes.sql").write_text(SUMMARY_THEN_CHANGES)
    return copy


def summary_rows(output: str) -> dict[str, int]:
    """`relation kind N rows` lines printed by print_shop_summary."""
    found = re.findall(r"^(\S+)\s+.*?\s(\d+) rows$", output, re.MULTILINE)
    return {relation: int(rows) for relation, rows in found}


def assert_first_summary(output: str) -> None:
    """The first build's relations, then the batch applied (summary_then_changes)."""
    assert "applied 7 changes to shop_raw" in output, output
    first = summary_rows(output)
    # the insert-only stream's file set: a header row and one row per landed file (as many
    # files as Spark's write of the events made)
    assert first.pop("shop.dbt_streams_files") >= 2
    assert first == FIRST_SUMMARY


def assert_consumed_summary(output: str) -> None:
    """After the build that consumed the batch: every stream model holds it once."""
    summary = summary_rows(output)
    assert summary["shop.customers_mirror"] == summary["shop_raw.customers"] == 20
    assert summary["shop.orders_audit"] == summary["shop_raw.orders"] == 61
    assert summary["shop.customers_pending_changes"] == 0
    # every customer version since the history began: the updated ones have two or more
    assert summary["shop.customer_versions"] > summary["shop_raw.customers"]
    # customer 2's three orders left the view with it; order 61 joined it
    assert summary["shop.order_customers_mirror"] == summary["shop.stg_order_customers"] == 58
    assert summary["shop.dbt_streams"] == 12
    # the feed's four events: a new customer, customer 1's two moves (the second landed
    # first), customer 2 deleted; the history keeps the moves and customer 2's closed version
    assert summary["shop.customers_cdc_current"] == summary["shop_raw.customers"] == 20
    assert summary["shop.customers_cdc_history"] == 20 + 1 + 2
    assert summary["shop.customers_cdc_current__cdc_tombstones"] == 1
    assert summary["shop.revenue_by_customer"] == summary["shop.customer_revenue"]
    # the new file's two events, once
    assert summary["shop.order_events_log"] == summary["shop_raw.order_events"] == 62
    assert re.search(r"^order events: \d+ files landed", output, re.MULTILINE)
    # customer 1 moved twice between the builds: two closed versions and the current one;
    # the new customer opened one, the deleted one's row was closed
    assert summary["shop.customers_history"] == 20 + 2 + 1
    assert summary["shop.current_customers"] == summary["shop_raw.customers"]
    versions = re.findall(r"^  country=(\S+) valid_from=(.+) valid_to=(.+)$", output, re.M)
    assert [(country, end == "null (current)") for country, _, end in versions] == [
        (versions[0][0], False),
        ("FR", False),
        ("DE", True),
    ]
    assert versions[0][2] == versions[1][1] and versions[1][2] == versions[2][1]
    # The summary ends with the adapter's show_streams table (name, source, type, mode,
    # consumer, offset, offset_time, stale, stale_after, ...).
    streams = {
        cells[0]: cells
        for cells in (
            [cell.strip() for cell in line.split("|")[1:-1]]
            for line in output.splitlines()
            if line.startswith("| ")
        )
    }
    assert streams["orders_audit__orders"][1:5] == [
        "`shop_raw`.`orders`",
        "delta",
        "append_only",
        "model.shop.orders_audit",
    ]
    assert streams["customers_mirror__customers"][7:9] == ["false", "-"]
