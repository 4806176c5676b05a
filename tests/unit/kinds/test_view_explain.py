"""The lines explain_stream prints for a view stream, without a JVM: each table's versions,
the pruned reads, the path a build would take and why, on test_view_path.py's Costed catalog.
"""

from dataclasses import replace

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.view_path import explain_view_path
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.definition import read_view_definition
from tests.unit.kinds.test_view import NAME, offsets
from tests.unit.kinds.test_view_path import CHEAPER, CUSTOMERS, ORDERS, Costed, config


def explained(run: Costed, at: dict[str, int], alone: bool = True, **settings) -> list[str]:
    """explain_view_path for the view stream of test_view's Shop, the tables at `at`."""
    record = offsets(1)[NAME]
    consumer = config(**{"key_ranges": True, "rebuild_min_bytes": 0, **settings})
    stored = {f"{NAME}@shop.{table}": offset for table, offset in at.items()}
    return explain_view_path(run, record, stored, consumer, alone)


PENDING = {"orders": 1, "customers": 3}
SHOP_CHANGES = {"orders": [{"id": 4}, {"id": 5}, {"id": 9}]}
TABLE_LINES = [
    f"  table {ORDERS}: offset version 1, latest version 3",
    f"  table {CUSTOMERS}: offset version 3, latest version 3",
]
PRUNE_LINE = (
    f"  the change of {ORDERS} reads {CUSTOMERS} where (`id` between 4 and 5 or `id` between 9 "
    "and 9)"
)


def shop(scanned: int = 1500) -> Costed:
    return Costed({"orders": 1000, "customers": 1000}, {"customers": scanned}, SHOP_CHANGES)


def test_explain_lists_each_tables_versions_the_pruned_reads_and_the_path() -> None:
    run = shop()
    assert explained(run, PENDING) == [*TABLE_LINES, PRUNE_LINE, f"  path: rebuild ({CHEAPER})"]
    assert f"explain cost select * from {CUSTOMERS} version as of 3 " in run.statements[-1]


def test_explain_with_nothing_pending_says_the_build_writes_nothing() -> None:
    run = shop()
    assert explained(run, {"orders": 3, "customers": 3}) == [
        f"  table {ORDERS}: offset version 3, latest version 3",
        f"  table {CUSTOMERS}: offset version 3, latest version 3",
        "  path: none (nothing pending: the next build writes nothing)",
    ]
    assert not any(s.startswith(("describe detail", "explain")) for s in run.statements)


def test_explain_names_a_redefined_view_and_a_missing_offset() -> None:
    record = replace(offsets(1)[NAME], source_id="old")
    assert explain_view_path(shop(), record, {}, config(), True) == [
        "  view shop.paired was redefined since the stream was created: the next build fails; "
        "rebuild the model with --full-refresh"
    ]
    assert explained(shop(), {"orders": 1}) == [
        f"  the offset on {CUSTOMERS} is missing: rebuild the model with --full-refresh"
    ]


INCREMENTAL_NOTE = "; only an apply_changes model that reads this one stream rebuilds)"
PATHS = [
    ({}, True, 999, "incremental (the change would scan 50% of what a rebuild scans (999 B of 2.0 KiB))"),  # noqa: E501
    ({"incremental": "strict"}, True, 1500, f"fail, as the model's incremental is 'strict' ({CHEAPER})"),  # noqa: E501
    ({}, False, 1500, f"incremental ({CHEAPER}{INCREMENTAL_NOTE}"),
    ({"incremental_strategy": "merge"}, True, 1500, f"incremental ({CHEAPER}{INCREMENTAL_NOTE}"),
    ({"rebuild_min_bytes": 2001}, True, 1500, "incremental (the view's tables hold 2.0 KiB, under the model's rebuild_min_bytes of 2.0 KiB)"),  # noqa: E501
    ({"rebuild_min_bytes": 2000}, True, 1500, f"rebuild ({CHEAPER})"),
]  # fmt: skip


@pytest.mark.parametrize(("settings", "alone", "scanned", "path"), PATHS)
def test_explain_gives_the_path_and_why(settings: dict, alone: bool, scanned: int, path: str):
    assert explained(shop(scanned), PENDING, alone, **settings)[-1] == f"  path: {path}"


@pytest.mark.parametrize(
    ("ids", "shown"),
    [
        ([1, 30, 50, 70], "(`id` between 1 and 1 or `id` between 30 and 30 or `id` between 50 "
         "and 50 or `id` between 70 and 70)"),  # 100 characters, whole
        ([9, 10, 30, 50, 70], "(`id` between 9 and 10 or `id` between 30 and 30 or `id` between "
         "50 and 50 or `id` between 70 and..."),  # 101 characters, cut
        ([10, 30, 50, 70], "(`id` between 10 and 10 or `id` between 30 and 30 or `id` between "
         "50 and 50 or `id` between 70 an..."),
    ],
)  # fmt: skip
def test_a_long_predicate_is_cut_to_a_hundred_characters(ids: list[int], shown: str) -> None:
    run = Costed(scanned={"customers": 0}, changes={"orders": [{"id": i} for i in ids]})
    line = explained(run, PENDING)[2]
    assert line == f"  the change of {ORDERS} reads {CUSTOMERS} where {shown}"
    assert len(shown) == 100


class Clashing(Costed):
    """customers has gained a column named like one a stream adds."""

    def __call__(self, sql: str) -> list[Row]:
        rows = super().__call__(sql)
        if sql == f"describe table extended {CUSTOMERS}":
            return [{"col_name": "metadata_action", "data_type": "string"}, *rows]
        return rows


def test_explain_names_the_stream_in_a_view_or_tables_error() -> None:
    aggregated = shop()
    aggregated.views = {"shop.paired": "select id, count(*) as n from orders group by id"}
    with pytest.raises(StreamError) as raised:
        explained(aggregated, PENDING)
    assert raised.value.msg == (
        f"Stream {NAME}: view shop.paired uses GROUP BY; a stream's view may only use "
        "projections, filters, inner and cross joins and UNION ALL."
    )
    clashing = Clashing({"orders": 1000, "customers": 1000}, {"customers": 1500}, SHOP_CHANGES)
    with pytest.raises(StreamError) as raised:
        explained(clashing, PENDING)
    assert raised.value.msg.startswith(
        f"Stream {NAME}: column 'metadata_action' of source {CUSTOMERS} has the name of the "
        "stream's own metadata_action column"
    )


def test_a_table_whose_name_holds_a_dot_is_read_by_its_schema_and_name() -> None:
    run = shop()
    run.views = {
        "shop.paired": "select o.id from shop.`my.orders` o join customers c on o.id = c.id"
    }
    run.tables = {**run.tables, "shop.my.orders": "delta"}
    record = offsets(1)[NAME]
    view = read_view_definition(run, "shop", "paired", NAME)
    record = replace(record, source_id=view.fingerprint)
    at = {f"{NAME}@shop.my.orders": 3, f"{NAME}@shop.customers": 3}
    assert explain_view_path(run, record, at, config(), True)[0] == (
        "  table `shop`.`my.orders`: offset version 3, latest version 3"
    )
    assert "describe history `shop`.`my.orders` limit 1" in run.statements
