"""Resolving stream() calls, on a fake kind of source: no Spark, only the engine's decisions.

The fake source counts what the engine asks of it, so the tests can assert repeatable read
(one pin per source and build, one read per stream), what a consumer's build records and
moves, and which calls it refuses."""

from dataclasses import replace
from datetime import datetime

import pytest

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.kinds.table_stream import resolve_stream
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from tests.unit.offsets.test_registry import record

T0 = datetime(2026, 11, 23, 9, 0, 0)
CONSUMER = "model.shop.orders_mirror"


class FakeKind:
    """A source at version `version`; each call is counted in `asked`."""

    source_type = "fake"
    modes = ("standard", "append_only")
    label = "fake sources"

    def __init__(self, version: int = 9, change_tracking: bool = True) -> None:
        self.version = version
        self.change_tracking = change_tracking
        self.asked: list[str] = []

    def describe(self, run, entry, stream):
        self.asked.append("describe")
        return SourceTable(entry.name, ("ID", "status"), self.change_tracking, None, "")  # type: ignore[arg-type]

    def identify(self, run, source):
        self.asked.append("identify")
        return SourceTable(source.name, source.columns, source.change_data_feed, None, "id-1")  # type: ignore[arg-type]

    def latest(self, run, source):
        self.asked.append("latest")
        return SourceVersion(self.version, T0)

    def history(self, run, source, offset, pin):
        self.asked.append("history")
        latest = SourceVersion(self.version, T0)
        return CommitsSinceOffset(source.name, offset.offset_version, self.version, (), T0, latest)

    def check_same(self, run, stream, offset, source, history):
        self.asked.append("check_same")
        return source

    def check_readable(self, run, reads, stream, source, offset, history, consuming):
        self.asked.append("check_readable")
        return ["about to go stale"]

    def check_start(self, run, reads, stream, source, versions, consumer, consuming):
        self.asked.append(f"check_start {versions}")

    def prepare(self, stream, source, creating, consuming, auto_enable, extension_days):
        self.asked.append("prepare")
        if not source.change_data_feed and not (creating and consuming and auto_enable):
            raise StreamError(f"Stream {stream}: no change tracking")
        return source, [("alter source", "tracking on")] if consuming else []

    def first_version(self, run, source, point, at):
        return int(point["version"]) + (1 if at else 0)  # as a Delta table's

    def changes_sql(self, mode, snapshot, first):
        return f"{mode} changes {first}..{snapshot.version} keyed {snapshot.unique_key}"

    def initial_rows_sql(self, snapshot):
        return f"initial rows at {snapshot.version}"

    def empty_sql(self, snapshot):
        return f"no rows at {snapshot.version}"


def registered(offset: int = 9, consumer: str = CONSUMER) -> dict:
    """The registry holding the stream at `offset`, consumed by `consumer`."""
    stream = replace(record("orders_mirror__orders", 3, offset=offset), consumer=consumer)
    return {stream.name: stream}


class Registered(dict):
    """The registry's one read: the stream's record by name."""


def request(name: str = "orders_mirror__orders", **fields) -> StreamRequest:
    values = {
        "name": name,
        "schema": "raw",
        "identifier": "orders",
        "mode": "standard",
        "unique_key": ("id",),
        "show_initial_rows": True,
        "start": None,
        "start_at": False,
        **fields,
    }
    return StreamRequest(**values)


def build(
    exists: bool = True, consumer: str | None = CONSUMER, full_refresh: bool = False, **fields
) -> StreamBuild:
    target = "`shop`.`orders_mirror`"
    return StreamBuild(consumer, "shop", target, exists, full_refresh, True, **fields)


def resolve(kind: FakeKind, registered: dict, the_build: StreamBuild, the_request=None) -> str:
    the_request = the_request or request()
    run = lambda sql: []  # noqa: E731 - the fake kind reads nothing
    entry = CatalogEntry(run, the_request.schema, the_request.identifier)
    return resolve_stream(run, Registered(registered), the_build, the_request, kind, entry)


def test_a_consumers_first_build_creates_the_stream_at_the_pin() -> None:
    kind, first = FakeKind(version=9), build(exists=False)
    assert resolve(kind, {}, first) == "initial rows at 9"
    [(recorded, _)] = first.reads.values()
    assert (recorded.offset_version, recorded.consumer, recorded.source_type) == (
        9,
        CONSUMER,
        "fake",
    )
    assert recorded.unique_key == ("ID",)  # spelled as the source spells it
    assert first.moves and first.has_write
    assert first.source_writes == [("alter source", "tracking on")]


def test_a_later_build_reads_from_the_offset_to_the_pin() -> None:
    kind, later = FakeKind(version=12), build()
    sql = resolve(kind, registered(offset=9), later)
    assert sql == "standard changes 10..12 keyed ('ID',)"
    assert later.reads["orders_mirror__orders"][0].offset_version == 12 and later.has_write
    assert later.warnings == ["about to go stale"]
    assert kind.asked.index("check_same") < kind.asked.index("check_readable")


def test_nothing_committed_since_the_offset_means_no_write() -> None:
    quiet = build()
    assert resolve(FakeKind(version=9), registered(offset=9), quiet) == (
        "standard changes 10..9 keyed ('ID',)"
    )
    assert not quiet.moves and not quiet.has_write


def test_every_reference_in_a_build_sees_the_same_rows() -> None:
    """Repeatable read: the source is pinned once per build, a stream read once."""
    kind, one = FakeKind(version=9), build(exists=False)
    first = resolve(kind, {}, one)
    kind.version = 10  # a commit lands while the build runs
    assert resolve(kind, {}, one) == first
    other = resolve(kind, {}, one, request("orders_audit__orders", mode="append_only"))
    assert other == "initial rows at 9"
    assert kind.asked.count("latest") == 1


def test_a_stream_has_one_consumer() -> None:
    taken = registered(consumer="model.shop.x")
    both = build(project_consumers=frozenset({CONSUMER, "model.shop.x"}))
    with pytest.raises(StreamError) as raised:
        resolve(FakeKind(), taken, both, request(other_consumers=("model.shop.y",)))
    assert raised.value.msg == (
        f"Stream orders_mirror__orders is consumed by model.shop.y, model.shop.x; {CONSUMER} "
        "cannot consume it too (one consumer per stream). Give one of them its own stream with "
        "stream(..., name='another_name'), or peek from a non-incremental model."
    )


def test_a_stream_whose_consumer_left_the_project_is_taken_over_on_a_rebuild() -> None:
    gone = registered(consumer="model.shop.gone")
    fresh = build(full_refresh=True, project_consumers=frozenset({CONSUMER}))
    assert resolve(FakeKind(version=5), gone, fresh) == "initial rows at 5"
    assert fresh.warnings[0] == (
        f"Stream orders_mirror__orders: taken over by {CONSUMER} from model.shop.gone, which is "
        "no longer in the project; the stream starts again from the source's current rows."
    )
    with pytest.raises(StreamError) as raised:
        resolve(FakeKind(), gone, build(project_consumers=frozenset({CONSUMER})))
    assert raised.value.msg == (
        "Stream orders_mirror__orders belonged to model.shop.gone, which is no longer in the "
        f"project. {CONSUMER} can take it over by starting it again from the source's current "
        "rows, which needs its target rebuilt: run it once with --full-refresh (or drop the "
        "stream with `dbt run-operation drop_stream --args '{name: orders_mirror__orders}'`)."
    )


def test_a_peek_never_turns_change_tracking_on() -> None:
    with pytest.raises(StreamError, match="no change tracking"):
        resolve(FakeKind(change_tracking=False), {}, build(consumer=None))


def test_dry_run_reads_no_offset() -> None:
    kind, dry = FakeKind(version=4), build(dry_run="--empty")
    assert resolve(kind, {}, dry) == "no rows at 4"
    assert dry.reads == {} and not dry.has_write
    assert "history" not in kind.asked


def test_unknown_mode_and_missing_key_are_refused_before_any_read() -> None:
    kind = FakeKind()
    with pytest.raises(StreamError, match="mode 'sideways' is not supported on fake sources"):
        resolve(kind, {}, build(), request(mode="sideways"))
    assert kind.asked == []
    with pytest.raises(StreamError, match=r"unique_key column\(s\) order_no not in source"):
        resolve(kind, {}, build(), request(unique_key=("order_no",)))


def test_a_start_point_is_checked_against_the_history() -> None:
    late = build(exists=False)
    assert resolve(
        FakeKind(version=9), {}, late, request(start={"version": 4}, start_at=True)
    ) == ("standard changes 5..9 keyed ('ID',)")
    with pytest.raises(StreamError, match="outside the history"):
        resolve(FakeKind(version=9), {}, build(exists=False), request(start={"version": 40}))
