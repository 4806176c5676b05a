"""A Delta table as a stream's source kind (no JVM): what it asks the catalog, which read
each mode gets, the warnings of its checks, and a start point it cannot read."""

from datetime import datetime, timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.schema_changes import SchemaReads
from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.delta_table import DeltaTable
from dbt.adapters.spark_streams.streams.kinds.source_kind import VERSIONS
from dbt.adapters.spark_streams.streams.records.netting import Snapshot
from tests.unit.delta.test_source import COLUMNS, Catalog, described
from tests.unit.offsets.test_registry_queue import record

NAME = "`raw`.`orders`"
SNAPSHOT = Snapshot(NAME, ("id", "amount"), ("id",), 6, "2026-11-25 09:00:00.000000")
DELTA = DeltaTable()


class Orders(Catalog):
    """raw.orders: described as in test_source, its history versions 0..6, its id."""

    def __init__(self) -> None:
        super().__init__(described(COLUMNS), {"delta.enableChangeDataFeed": "true"})
        self.asked: list[str] = []

    def __call__(self, sql: str) -> list[dict]:
        self.asked.append(sql)
        if sql.startswith(f"describe history {NAME}"):
            rows = [
                {"version": v, "timestamp": datetime(2026, 11, 25, 9, v), "operation": "WRITE"}
                for v in range(6, -1, -1)
            ]
            return rows[:1] if sql.endswith("limit 1") else rows
        if sql == f"describe detail {NAME}":
            return [{"id": "table-9"}]
        return super().__call__(sql)


def test_the_questions_it_asks_the_catalog() -> None:
    run = Orders()
    source = DELTA.describe(run, "raw", "orders", "s")
    assert source.name == NAME and source.change_data_feed
    assert DELTA.identify(run, source).table_id == "table-9"
    assert DELTA.latest(run, source) == SourceVersion(6, datetime(2026, 11, 25, 9, 6))
    offset = record("s", 1, offset=4)
    pending = DELTA.history(run, source, offset, SourceVersion(5, datetime(2026, 11, 25)))
    assert [row["version"] for row in pending.commits] == [5]
    assert DELTA.history(run, source, offset, None).pin == 6


@pytest.mark.parametrize(
    ("mode", "marker"),
    [
        ("append_only", "where _change_type = 'insert'"),
        (VERSIONS, "_occurrence > _unchanged"),
        ("standard", "first_value(named_struct('row', "),
    ],
)
def test_each_mode_reads_its_own_way(mode: str, marker: str) -> None:
    sql = DELTA.changes_sql(mode, SNAPSHOT, 5)
    assert marker in sql and "table_changes('`raw`.`orders`', 5, 6)" in sql


def test_an_empty_range_reads_no_rows() -> None:
    sql = DELTA.changes_sql("standard", SNAPSHOT, 7)
    assert sql == DELTA.empty_sql(SNAPSHOT)
    assert sql.endswith("from `raw`.`orders` version as of 6) where false")
    assert DELTA.initial_rows_sql(SNAPSHOT).endswith("from `raw`.`orders` version as of 6")


def test_a_range_about_to_leave_retention_is_a_warning() -> None:
    source = DELTA.describe(Orders(), "raw", "orders", "s")
    offset = record("s", 1, offset=4)
    soon = datetime.now() - source.retention.readable_for + timedelta(hours=2)
    commits = ({"version": 5, "timestamp": soon, "operation": "WRITE"},)
    pending = CommitsSinceOffset(NAME, 4, 5, commits)
    [warning] = DELTA.check_readable(Orders(), SchemaReads(), "s", source, offset, pending, True)
    assert warning.startswith("Stream s goes stale at ")
    later = ({"version": 5, "timestamp": datetime.now(), "operation": "WRITE"},)
    fresh = CommitsSinceOffset(NAME, 4, 5, later)
    assert DELTA.check_readable(Orders(), SchemaReads(), "s", source, offset, fresh, True) == []


def test_a_start_point_it_cannot_read_names_the_forms() -> None:
    source = DELTA.describe(Orders(), "raw", "orders", "s")
    with pytest.raises(StreamError) as raised:
        DELTA.first_version(Orders(), source, {"timestamp": "yesterday"}, True)
    assert raised.value.msg.startswith(
        "Stream start {'timestamp': 'yesterday'} on `raw`.`orders`: "
    )
    assert raised.value.msg.endswith(
        ". Give {'version': n} or {'timestamp': 'YYYY-MM-DD HH:MM:SS'}."
    )
    with pytest.raises(StreamError) as raised:
        DELTA.first_version(Orders(), source, {"row": 3}, True)
    assert raised.value.msg == (
        "Point {'row': 3} on `raw`.`orders`: give {'version': n} or {'timestamp': '...'}."
    )
    assert DELTA.first_version(Orders(), source, {"timestamp": "2026-11-25 09:03:30"}, False) == 4
