"""changes() on a Delta table reads what the call names: the macro's before=, end= and
information= options, the catalog entry the kind already described, the key it nets by, the
end state's commit time, and the call named in every error about a point or the source.

On test_changes.py's fake history (versions 0..3 a minute apart), with a fake that answers
only statements on `raw`.`orders` and records them."""

from datetime import timedelta

import pytest

from dbt.adapters.spark_streams.streams.delta.schema_changes import (
    INCOMPATIBLE,
    READ_ACROSS_MARKER,
    REPLACED_MARKER,
    RETRY_ACROSS_MARKER,
)
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.delta_table import DELTA_TABLE
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest, table_changes_sql
from tests.unit.frozen_clock import freeze_staleness_clock
from tests.unit.travel.test_changes import (
    CDF_ON,
    HISTORY,
    TABLE,
    FakeDeltaWithId,
    T,
    read_range,
    stream,
)


@pytest.fixture(autouse=True)
def _a_day_after_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_staleness_clock(monkeypatch, T + timedelta(days=1))


class Orders(FakeDeltaWithId):
    """raw.orders on HISTORY; refuses a statement on any other table, records every one."""

    def __init__(self, provider: str = "delta") -> None:
        super().__init__(HISTORY, CDF_ON)
        self.provider = provider
        self.statements: list[str] = []

    def __call__(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if not sql.startswith("show views"):
            assert TABLE in sql, sql
        if sql.startswith("show views"):
            return []
        rows = super().__call__(sql)
        if sql.startswith("describe table extended"):
            return [
                {**row, "data_type": self.provider} if row["col_name"] == "Provider" else row
                for row in rows
            ]
        return rows


def changes(run: Orders | None = None, **arguments) -> str:
    request = ChangesRequest("raw", "orders", **arguments)
    return table_changes_sql(run or Orders(), {}, lambda _: None, request)


def test_the_macros_before_end_and_information_reach_the_request() -> None:
    options = {"before": {"version": 1}, "end": {"version": 2}, "information": "append_only"}
    request = ChangesRequest.from_options("raw", "orders", options)
    assert (request.at, request.before, request.end) == (None, {"version": 1}, {"version": 2})
    assert request.information == "append_only"
    assert ChangesRequest.from_options("raw", "orders", {"information": None}).information == (
        "default"
    )
    run = Orders()
    sql = table_changes_sql(run, {}, lambda _: None, request)
    assert read_range(sql) == (1, 2)
    assert "_change_type = 'insert'" in sql  # append_only: the inserts, as inserted


def test_append_only_reads_inserts_and_default_nets_updates() -> None:
    assert "_change_type = 'insert'" in changes(at={"version": 0}, information="append_only")
    assert "_change_type = 'insert'" not in changes(at={"version": 0})


def test_the_kinds_catalog_entry_is_described_once() -> None:
    run = Orders()
    entry = CatalogEntry(run, "raw", "orders")
    assert entry.described  # as choosing the kind reads it
    request = ChangesRequest("raw", "orders", at={"version": 1})
    for sql in (
        table_changes_sql(run, {}, lambda _: None, request, entry),
        DELTA_TABLE.changes(run, {}, lambda _: None, request, entry),
        table_changes_sql(run, {}, lambda _: None, ChangesRequest("raw", "orders", empty=True),
                          entry),
    ):  # fmt: skip
        assert sql
    assert [s for s in run.statements if s.startswith("describe table extended")] == [
        f"describe table extended {TABLE}"
    ]


def test_a_stream_named_by_the_kind_is_looked_up() -> None:
    request = ChangesRequest("raw", "orders", at={"stream": "s"})
    sql = DELTA_TABLE.changes(Orders(), {}, {"s": stream(offset=2)}.get, request, None)
    assert read_range(sql) == (3, 3)


def test_a_keyed_read_hashes_the_key_as_the_source_spells_it() -> None:
    keyed = changes(at={"version": 0}, unique_key=("ID",))
    assert "window _key as (partition by `id` order by _commit_version" in keyed
    assert "sha1(to_json(named_struct('id', _first.row.`id`)" in keyed
    unkeyed = changes(at={"version": 0})  # rows net as values
    assert "partition by `id`" not in unkeyed and "group by 1" in unkeyed


@pytest.mark.parametrize(
    ("end", "timestamp"),
    [(2, "2026-11-20 09:02:00.000000"), (3, "2026-11-20 09:03:00.000000")],
)
def test_an_empty_interval_is_stamped_with_its_end_states_commit(end: int, timestamp: str) -> None:
    sql = changes(at={"version": end}, end={"version": end})
    assert f"timestamp'{timestamp}' as metadata_commit_timestamp" in sql
    assert f"from `raw`.`orders` version as of {end}) where false" in sql


@pytest.mark.parametrize(
    ("arguments", "point"),
    [
        ({"at": {"timestamp": "yesterday"}}, {"timestamp": "yesterday"}),
        ({"before": {"timestamp": "noon"}}, {"timestamp": "noon"}),
        ({"at": {"version": 0}, "end": {"timestamp": "later"}}, {"timestamp": "later"}),
    ],
)
def test_a_point_that_names_no_state_is_refused_naming_the_call(
    arguments: dict, point: dict
) -> None:
    with pytest.raises(StreamError) as raised:
        changes(**arguments)
    message = raised.value.msg
    assert message.startswith(f"changes(raw.orders): point {point!r}: ")
    assert message.endswith(". Give {'version': n} or {'timestamp': 'YYYY-MM-DD HH:MM:SS'}.")


def test_empty_reads_the_newest_version_of_this_table_only() -> None:
    run = Orders()
    sql = changes(run, empty=True)
    assert sql.endswith("from `raw`.`orders` version as of 3) where false")
    assert f"describe history {TABLE} limit 1" in run.statements


@pytest.mark.parametrize("empty", [False, True])
def test_a_source_that_is_no_delta_table_is_named_with_the_call(empty: bool) -> None:
    with pytest.raises(StreamError) as raised:
        changes(Orders(provider="parquet"), at={"version": 1}, empty=empty)
    assert raised.value.msg.startswith(
        "changes(raw.orders): source `raw`.`orders` is a parquet table; standard and "
        "append_only streams need a Delta table with Change Data Feed."
    )


class Prefs(Orders):
    """raw.orders with a map column and a location, as DESCRIBE TABLE EXTENDED shows them."""

    def __call__(self, sql: str) -> list[Row]:
        rows = super().__call__(sql)
        if sql.startswith("describe table extended"):
            return [
                rows[0],
                {"col_name": "attrs", "data_type": "map<string,int>"},
                *rows[1:],
                {"col_name": "Location", "data_type": "s3://bucket/orders"},
            ]
        return rows


def test_a_table_with_a_location_and_a_map_is_read_by_path_comparing_sorted_entries() -> None:
    sql = changes(Prefs(), at={"version": 0}, unique_key=("id",))
    assert "from table_changes_by_path('s3://bucket/orders', 1, 3)" in sql
    assert "array_sort(transform(map_entries(" in sql  # a map compares by its sorted entries


def test_writes_in_the_interval_mark_the_read_for_a_retry_across_evolution() -> None:
    assert changes(at={"version": 0}).startswith(f"{RETRY_ACROSS_MARKER} ")
    assert RETRY_ACROSS_MARKER not in changes(at={"version": 3})  # nothing read


class Evolved(Orders):
    """raw.orders whose history holds `operations` (version -> operation); Delta plans a read
    across them as incompatible when `incompatible`."""

    def __init__(self, operations: dict[int, str], incompatible: bool = True) -> None:
        super().__init__()
        self.operations, self.incompatible = operations, incompatible
        self.history = [
            {**row, "operation": operations.get(row["version"], row["operation"])}
            for row in self.history
        ]

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("explain "):
            self.statements.append(sql)
            plan = INCOMPATIBLE + "SCHEMA_CHANGE" if self.incompatible else "Scan"
            return [{"plan": plan}]
        return super().__call__(sql)


def test_a_rename_in_the_interval_is_read_across_with_the_check_off() -> None:
    run = Evolved({2: "RENAME COLUMN"})
    sql = changes(run, at={"version": 0})
    assert READ_ACROSS_MARKER in sql and REPLACED_MARKER not in sql
    assert "explain select * from table_changes('`raw`.`orders`', 1, 3)" in run.statements


def test_a_commit_that_may_replace_the_schema_marks_a_readable_interval() -> None:
    sql = changes(Evolved({2: "UPDATE SCHEMA"}, incompatible=False), at={"version": 0})
    assert REPLACED_MARKER in sql and READ_ACROSS_MARKER not in sql
    plain = changes(Evolved({}, incompatible=False), at={"version": 0})
    assert REPLACED_MARKER not in plain and READ_ACROSS_MARKER not in plain


def test_an_unreadable_replaced_schema_names_a_later_start() -> None:
    with pytest.raises(StreamError) as raised:
        changes(Evolved({2: "UPDATE SCHEMA"}), at={"version": 0})
    assert raised.value.msg.startswith(
        "changes(raw.orders): version 2 of `raw`.`orders` changed its schema "
        "(UPDATE SCHEMA), and Delta cannot read"
    )
    assert "(versions 1 to 3) across that change" in raised.value.msg
    assert raised.value.msg.endswith("e.g. at={'version': 2}, or without at= / before= "
                                     "(the source's current rows).")  # fmt: skip


def test_a_rename_and_a_replaced_schema_together_are_refused() -> None:
    with pytest.raises(StreamError) as raised:
        changes(Evolved({2: "RENAME COLUMN", 3: "UPDATE SCHEMA"}), at={"version": 0})
    assert raised.value.msg.startswith(
        "changes(raw.orders): reading across version 2 of `raw`.`orders`, which "
    )
    assert "and version 3 of `raw`.`orders` " in raised.value.msg
