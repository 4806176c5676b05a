"""The integration project builds end to end in separate dbt processes, as a user builds it:
sources, a build, its summary and a batch of changes, a build that consumes the batch once,
and its summary."""

import re
import shutil
from pathlib import Path

import pytest

from tests.integration.dbt_process import run_dbt_process

PROJECT = Path(__file__).resolve().parents[2] / "integration_project"
RUNTIME_DIRS = ("target", "logs", "spark-warehouse", "metastore", "dbt_packages")
# The first build's summary and the batch of changes in one process (one cold start fewer):
# the summary is printed before the changes are applied.
SUMMARY_THEN_CHANGES = """
{% macro summary_then_changes() %}
  {% do print_shop_summary() %}
  {% do apply_shop_changes() %}
{% endmacro %}
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project, built as a user builds it: with Spark's defaults (generated
    code, adaptive execution), the one integration test that runs them. The functional tests
    and the cluster test run interpreted expressions (tests/conftest.py)."""
    copy = tmp_path_factory.mktemp("shop") / "integration_project"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns(*RUNTIME_DIRS))
    (copy / "macros" / "summary_then_changes.sql").write_text(SUMMARY_THEN_CHANGES)
    return copy


def summary_rows(output: str) -> dict[str, int]:
    """`relation kind N rows` lines printed by print_shop_summary."""
    found = re.findall(r"^(\S+)\s+.*?\s(\d+) rows$", output, re.MULTILINE)
    return {relation: int(rows) for relation, rows in found}


def test_each_step_sees_what_the_previous_process_built(shop: Path) -> None:
    created = run_dbt_process(
        shop, "run-operation", "create_shop_sources", "--args", "{customers: 20}"
    )
    assert created.returncode == 0, created.stdout + created.stderr

    built = run_dbt_process(shop, "build")
    assert built.returncode == 0, built.stdout + built.stderr
    assert "Completed successfully" in built.stdout

    summary = run_dbt_process(shop, "run-operation", "summary_then_changes")
    assert summary.returncode == 0, summary.stdout + summary.stderr
    assert "applied 7 changes to shop_raw" in summary.stdout
    first = summary_rows(summary.stdout)
    # the insert-only stream's file set: a header row and one row per landed file (as many
    # files as Spark's write of the events made)
    assert first.pop("shop.dbt_streams_files") >= 2
    assert first == {
        "shop_raw.customers": 20,
        "shop_raw.order_events": 60,
        "shop_raw.order_items": 120,
        "shop_raw.orders": 60,
        "shop.country_regions": 4,
        "shop.customer_revenue": 20,
        "shop.customer_versions": 20,
        "shop.customers_mirror": 20,
        "shop.customers_pending_changes": 0,
        "shop.customers_history": 20,
        "shop.customers_snapshot": 20,
        "shop.current_customers": 20,
        # four table streams (one insert-only), and a view stream with one table stream per
        # base table
        "shop.dbt_streams": 7,
        "shop.dbt_streams_log": 7,
        "shop.order_events_log": 60,
        "shop.orders_audit": 60,
        "shop.order_customers_mirror": 60,
        "shop.orders_latest": 60,
        "shop.stg_customers": 20,
        "shop.stg_order_customers": 60,
        "shop.stg_orders": 60,
    }
    assert (shop / "spark-warehouse" / "shop.db").is_dir()
    assert (shop / "metastore" / "metastore_db").is_dir()


def test_stream_models_consume_a_batch_of_changes_once(shop: Path) -> None:
    # the batch was applied after the first build's summary (summary_then_changes)
    built = run_dbt_process(shop, "build")
    assert built.returncode == 0, built.stdout + built.stderr
    assert "PASS assert_customers_mirror_matches_source" in built.stdout
    assert "PASS assert_pending_changes_match_peek" in built.stdout
    assert "PASS assert_order_customers_mirror_matches_view" in built.stdout
    assert "PASS assert_current_customers_match_source" in built.stdout

    printed = run_dbt_process(shop, "run-operation", "print_shop_summary")
    assert printed.returncode == 0, printed.stdout + printed.stderr
    summary = summary_rows(printed.stdout)
    assert summary["shop.customers_mirror"] == summary["shop_raw.customers"] == 20
    assert summary["shop.orders_audit"] == summary["shop_raw.orders"] == 61
    assert summary["shop.customers_pending_changes"] == 0
    # every customer version since the history began: the updated ones have two or more
    assert summary["shop.customer_versions"] > summary["shop_raw.customers"]
    # customer 2's three orders left the view with it; order 61 joined it
    assert summary["shop.order_customers_mirror"] == summary["shop.stg_order_customers"] == 58
    assert summary["shop.dbt_streams"] == 7
    assert summary["shop.dbt_streams_log"] == 14  # one row per stream per build
    # the new file's two events, once
    assert summary["shop.order_events_log"] == summary["shop_raw.order_events"] == 62
    assert "PASS assert_order_events_logged_once" in built.stdout
    assert re.search(r"^order events: \d+ files landed", printed.stdout, re.MULTILINE)
    # customer 1 moved twice between the builds: two closed versions and the current one;
    # the new customer opened one, the deleted one's row was closed
    assert summary["shop.customers_history"] == 20 + 2 + 1
    assert summary["shop.current_customers"] == summary["shop_raw.customers"]
    versions = re.findall(r"^  country=(\S+) valid_from=(.+) valid_to=(.+)$", printed.stdout, re.M)
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
            for line in printed.stdout.splitlines()
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
