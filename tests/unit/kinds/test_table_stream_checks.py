"""What a table stream's build asks its source kind, on a fake kind that checks each
question: the stream and offset each names, how a first build, a peek and a full refresh
prepare and record, which pending commits are read without netting, where a start point may
lie, and the pin the first history read sets for every later reference."""

from dataclasses import replace
from datetime import datetime

import pytest

from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.table_stream import resolve_stream
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from tests.unit.kinds.test_table_stream import (
    CONSUMER,
    T0,
    FakeKind,
    Registered,
    build,
    registered,
    request,
)


def no_rows(sql: str) -> list[dict]:
    return []


class CheckingKind(FakeKind):
    """A FakeKind that checks what it is asked with, and whose pending commits are `commits`
    (blind appends by default)."""

    def __init__(self, version: int = 12, commits: tuple[dict, ...] | None = None) -> None:
        super().__init__(version)
        self.commits = commits
        self.arguments: dict[str, tuple] = {}

    def describe(self, run, entry, stream):
        assert run is no_rows and (entry.schema, entry.identifier) == ("raw", "orders")
        self.arguments["describe"] = (stream,)
        return super().describe(run, entry, stream)

    def history(self, run, source, offset, pin):
        assert run is no_rows
        self.asked.append("history")
        commits = self.commits
        if commits is None:
            commits = tuple(
                {"version": v, "operation": "WRITE", "isBlindAppend": True}
                for v in range(offset.offset_version + 1, self.version + 1)
            )
        latest = SourceVersion(self.version, T0)
        return CommitsSinceOffset(
            source.name, offset.offset_version, self.version, commits, T0, latest
        )

    def check_same(self, run, stream, offset, source, history):
        assert run is no_rows
        self.arguments["check_same"] = (stream, offset.offset_version)
        return super().check_same(run, stream, offset, source, history)

    def check_readable(self, run, reads, stream, source, offset, history, consuming):
        assert run is no_rows
        self.arguments["check_readable"] = (stream, offset.offset_version, consuming)
        return super().check_readable(run, reads, stream, source, offset, history, consuming)

    def prepare(self, stream, source, creating, consuming, auto_enable, extension_days):
        self.arguments["prepare"] = (stream, creating, consuming, auto_enable, extension_days)
        return super().prepare(stream, source, creating, consuming, auto_enable, extension_days)

    def identify(self, run, source):
        assert run is no_rows
        return super().identify(run, source)

    def latest(self, run, source):
        assert run is no_rows
        return super().latest(run, source)


def resolve_checked(kind: CheckingKind, stored: dict, the_build, the_request=None) -> str:
    the_request = the_request or request()
    entry = CatalogEntry(no_rows, the_request.schema, the_request.identifier)
    return resolve_stream(no_rows, Registered(stored), the_build, the_request, kind, entry)


def test_each_question_names_the_stream_and_the_offset() -> None:
    kind = CheckingKind()
    later = build(max_data_extension_days=14)
    resolve_checked(kind, registered(offset=9), later)
    name = "orders_mirror__orders"
    assert kind.arguments == {
        "describe": (name,),
        "check_same": (name, 9),
        "check_readable": (name, 9, True),
        "prepare": (name, False, True, True, 14),
    }


def test_a_first_build_prepares_the_source_as_creating() -> None:
    kind = CheckingKind()
    resolve_checked(kind, {}, build(exists=False))
    assert kind.arguments["prepare"][:3] == ("orders_mirror__orders", True, True)
    assert "history" not in kind.asked


def test_a_keyed_stream_of_appends_is_read_without_netting() -> None:
    kind = CheckingKind()
    later = build()
    assert (
        resolve_checked(kind, registered(offset=9), later)
        == "append_only changes 10..12 keyed ('ID',)"
    )
    assert later.only_appends


@pytest.mark.parametrize(
    ("commits", "the_request"),
    [
        ((
            {"version": 10, "operation": "WRITE", "isBlindAppend": True},
            {"version": 11, "operation": "DELETE"},
            {"version": 12, "operation": "WRITE", "isBlindAppend": True},
        ), request()),
        (None, request(unique_key=())),  # keyless: duplicates net as values
        ((), request()),  # history not read (the pin is past the offset): not known
    ],
)  # fmt: skip
def test_other_ranges_are_netted(commits, the_request) -> None:
    kind = CheckingKind(commits=commits)
    later = build()
    sql = resolve_checked(kind, registered(offset=9), later, the_request)
    assert sql.startswith("standard changes 10..12")
    if the_request.unique_key:
        assert not later.only_appends


def test_a_new_stream_is_never_only_appends() -> None:
    first = build(exists=False)
    resolve_checked(CheckingKind(), {}, first)
    assert not first.only_appends


def test_the_record_keeps_its_creation_time_and_transaction_until_a_full_refresh() -> None:
    stored = registered(offset=9)
    [(name, existing)] = stored.items()
    later = build()
    resolve_checked(CheckingKind(), stored, later)
    moved = later.reads[name][0]
    assert (moved.created_on, moved.txn_version) == (existing.created_on, existing.txn_version)
    assert (moved.offset_version, moved.offset_timestamp) == (12, T0)
    assert moved.last_consumed_on is not None and moved.last_consumed_on > datetime(2026, 1, 1)
    assert (moved.schema, moved.target_table, moved.consumer) == (
        "shop",
        "`shop`.`orders_mirror`",
        CONSUMER,
    )
    refreshed = build(full_refresh=True)
    resolve_checked(CheckingKind(), registered(offset=9), refreshed)
    assert refreshed.reads[name][0].created_on > existing.created_on


def test_a_peek_records_no_consumption() -> None:
    peek = build(consumer=None)
    resolve_checked(CheckingKind(), registered(offset=9), peek)
    [(recorded, _)] = peek.reads.values()
    assert recorded.consumer == ""


def test_a_start_outside_the_history_names_it() -> None:
    with pytest.raises(StreamError) as raised:
        resolve_checked(
            CheckingKind(version=9), {}, build(exists=False), request(start={"version": -5})
        )
    assert raised.value.msg == (
        "Stream orders_mirror__orders: start {'version': -5} is outside the history of "
        "`raw`.`orders`, whose versions run from 0 to 9."
    )


@pytest.mark.parametrize(
    ("start", "at", "first"),
    [(0, False, 0), (9, True, 10), (9, False, 9)],  # the oldest state, and after the newest
)
def test_a_start_at_either_end_of_the_history_is_read(start: int, at: bool, first: int) -> None:
    sql = resolve_checked(
        CheckingKind(version=9), {}, build(exists=False),
        request(start={"version": start}, start_at=at),
    )  # fmt: skip
    assert sql == f"standard changes {first}..9 keyed ('ID',)"


@pytest.mark.parametrize(("start", "at"), [(10, True), (-1, False)])  # first 11, first -1
def test_a_start_one_past_either_end_is_refused(start: int, at: bool) -> None:
    with pytest.raises(StreamError, match="outside the history"):
        resolve_checked(
            CheckingKind(version=9), {}, build(exists=False),
            request(start={"version": start}, start_at=at),
        )  # fmt: skip


def test_a_full_refresh_starts_an_existing_stream_over_without_its_history() -> None:
    """--full-refresh recreates the stream: initial rows at the pin, the source prepared as
    for a new stream, the old offset's history never read."""
    kind, refreshed = CheckingKind(), build(full_refresh=True)
    assert resolve_checked(kind, registered(offset=9), refreshed) == "initial rows at 12"
    assert "history" not in kind.asked and "check_same" not in kind.arguments
    assert kind.arguments["prepare"][1] is True  # creating
    assert refreshed.moves and not refreshed.only_appends
    [(recorded, _)] = refreshed.reads.values()
    assert recorded.offset_version == 12


def test_the_first_history_read_pins_the_source_for_every_later_reference() -> None:
    """Repeatable read for existing streams: the history read of the first stream pins the
    source; a second stream of the same source in the build is read with that pin and up to
    it, though a commit landed in between."""
    pins_given: list[int | None] = []

    class PinRecordingKind(CheckingKind):
        def history(self, run, source, offset, pin):
            pins_given.append(None if pin is None else pin.version)
            return super().history(run, source, offset, pin)

    kind, later = PinRecordingKind(version=12), build()
    stored = {
        "orders_mirror__orders": registered(offset=9)["orders_mirror__orders"],
        "orders_audit__orders": replace(
            registered(offset=10)["orders_mirror__orders"], name="orders_audit__orders"
        ),
    }
    assert resolve_checked(kind, stored, later) == "append_only changes 10..12 keyed ('ID',)"
    kind.version = 13  # a commit lands while the build runs
    second = resolve_checked(kind, stored, later, request("orders_audit__orders"))
    assert second == "append_only changes 11..12 keyed ('ID',)"
    assert pins_given == [None, 12]
    assert later.pins["`raw`.`orders`"].version == 12
