"""`changes()`: the change records between two states of a Delta table, read-only.

The same rows a stream would give (same columns, same netting), for an interval the caller
names instead of a stream's offset: `changes(t, at=X, end=Y)` is the net difference between
`t` as of X and `t` as of Y. Nothing is written and no offset moves, so every check happens
here, before the SQL exists: the points, the interval, and whether Delta can still read it.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from dbt.adapters.spark_streams.streams.delta.points import state_in_history
from dbt.adapters.spark_streams.streams.delta.schema_changes import (
    READ_ACROSS_MARKER,
    REPLACED_MARKER,
    RETRY_ACROSS_MARKER,
    may_have_evolved_silently,
    schema_read,
    unsafe_together,
)
from dbt.adapters.spark_streams.streams.delta.source import (
    SourceTable,
    SourceVersion,
    describe_source,
    latest_version,
    source_table_id,
    spelled_key,
)
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.records.netting import Snapshot, changes_between, empty_sql
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry, as_key
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql
from dbt.adapters.spark_streams.streams.travel.readable import check_interval_readable

INFORMATION = {"default": "standard", "append_only": "append_only"}
POINT_KINDS = ("version", "timestamp")
StreamLookup = Callable[[str], StreamRecord | None]
"""How `at={'stream': name}` finds a stream's record (the registry's `get`)."""


@dataclass(frozen=True)
class ChangesRequest:
    """The arguments of one `changes()` call."""

    schema: str
    identifier: str
    at: dict | None = None
    before: dict | None = None
    end: dict | None = None
    information: str = "default"
    unique_key: tuple[str, ...] = ()
    empty: bool = False  # dbt's --empty: the columns and no rows

    @classmethod
    def from_options(
        cls, schema: str, identifier: str, options: dict[str, Any]
    ) -> "ChangesRequest":
        """The request of the changes() macro's arguments (`options`) on schema.identifier."""
        return cls(
            schema=schema,
            identifier=identifier,
            at=options.get("at"),
            before=options.get("before"),
            end=options.get("end"),
            information=str(options.get("information") or "default"),
            unique_key=as_key(options.get("unique_key")),
            empty=bool(options.get("empty")),
        )

    @property
    def label(self) -> str:
        return f"changes({self.schema}.{self.identifier})"

    @property
    def ends_at_build(self) -> bool:
        """Whether the interval ends at (or starts from) the state the build pins: no end=
        given, or at={'stream': ...}. A view holding such SQL would keep that state forever."""
        return self.end is None or "stream" in (self.at or {})


@dataclass(frozen=True)
class Interval:
    """The versions an interval reads: first..last, both inclusive (empty when first > last)."""

    first: int
    last: int
    last_time: datetime
    read_across: bool = False  # a schema change Delta reads only with its check off
    retry_across: bool = False  # a MERGE or write that may have evolved the schema unseen
    replaced: bool = False  # a commit that may have replaced the schema


def table_changes_sql(
    run: RunSql,
    pins: dict[str, SourceVersion],
    find_stream: StreamLookup,
    request: ChangesRequest,
    entry: CatalogEntry | None = None,
) -> str:
    """The SQL of the interval's change records on a Delta table (described from the
    catalog's `entry` when given). `pins` holds the build's pinned versions (shared with its
    streams): the default end, taken once per build."""
    if request.empty:
        return _empty_changes_sql(run, request, entry)
    mode = information_mode(request)
    source, interval = table_interval(run, pins, find_stream, request, entry)
    key = spelled_key(request.label, request.unique_key, source)
    snapshot = Snapshot(
        source.name,
        source.columns,
        key,
        interval.last,
        interval.last_time.strftime("%Y-%m-%d %H:%M:%S.%f"),
        source.column_types,
        source.location,
    )
    return marked(changes_between(mode, snapshot, interval.first), interval)


def table_interval(
    run: RunSql,
    pins: dict[str, SourceVersion],
    find_stream: StreamLookup,
    request: ChangesRequest,
    entry: CatalogEntry | None = None,
) -> tuple[SourceTable, Interval]:
    """The table the request reads and its interval, checked: the points exist, the end is
    not before the start, and Delta can still read the changes in between."""
    start_point = _start(request)
    source = describe_source(run, entry or _entry(run, request), request.label)
    pin = pins.setdefault(source.name, latest_version(run, source.name))
    history = [r for r in run(f"describe history {source.name}") if r["version"] <= pin.version]
    first = _first_version(run, find_stream, request, source, history, start_point)
    interval = _interval(request, source, history, pin, first)
    check_interval_readable(request.label, source, history, (interval.first, interval.last))
    return source, _schema_checked(run, request, source, history, interval)


def _schema_checked(
    run: RunSql,
    request: ChangesRequest,
    source: SourceTable,
    history: list[Row],
    interval: Interval,
) -> Interval:
    """The interval checked for schema changes as a new stream's first read is: read across a
    rename, drop or widening (its SQL then carries READ_ACROSS_MARKER, on which the statement
    runs with Delta's check off), or refused naming a later start."""
    if interval.first >= interval.last:
        return interval
    inside = sorted(
        (row for row in history if interval.first <= int(row["version"]) <= interval.last),
        key=lambda row: int(row["version"]),
    )
    pending = CommitsSinceOffset(source.name, interval.first - 1, interval.last, tuple(inside))
    read = schema_read(run, request.label, pending, "", started=True)
    if read.check_off is not None and read.replacing is not None:
        raise unsafe_together(request.label, read, read, "")
    return replace(
        interval,
        read_across=read.check_off is not None,
        retry_across=may_have_evolved_silently(read),
        replaced=read.replacing is not None,
    )


def marked(sql: str, *intervals: Interval) -> str:
    """The SQL with READ_ACROSS_MARKER when one of its intervals reads across a change, with
    RETRY_ACROSS_MARKER when one may cross a schema evolution the history does not show."""
    if any(i.read_across for i in intervals):
        sql = f"{READ_ACROSS_MARKER} {sql}"
    if any(i.retry_across for i in intervals):
        sql = f"{RETRY_ACROSS_MARKER} {sql}"
    if any(i.replaced for i in intervals):
        sql = f"{REPLACED_MARKER} {sql}"
    return sql


def _entry(run: RunSql, request: ChangesRequest) -> CatalogEntry:
    return CatalogEntry(run, request.schema, request.identifier)


def _empty_changes_sql(run: RunSql, request: ChangesRequest, entry: CatalogEntry | None) -> str:
    """dbt's --empty: the columns of `changes()` and no rows."""
    information_mode(request)
    source = describe_source(run, entry or _entry(run, request), request.label)
    key = spelled_key(request.label, request.unique_key, source)
    latest = latest_version(run, source.name)
    snapshot = Snapshot(
        source.name,
        source.columns,
        key,
        latest.version,
        latest.timestamp_text,
        source.column_types,
    )
    return empty_sql(snapshot)


def information_mode(request: ChangesRequest) -> str:
    if request.information not in INFORMATION:
        raise StreamError(
            f"{request.label}: information={request.information!r} is not one of "
            f"{', '.join(map(repr, INFORMATION))}."
        )
    return INFORMATION[request.information]


def _start(request: ChangesRequest) -> tuple[dict, bool]:
    """The start point and whether it is `at` (True) or `before` (False)."""
    if (request.at is None) == (request.before is None):
        raise StreamError(
            f"{request.label}: give exactly one of at= or before= (at names the table's state "
            "including a point's commit, before the state just ahead of it), e.g. "
            "at={'version': 3}."
        )
    at = request.at is not None
    point = request.at if at else request.before
    _check_point(request, "at" if at else "before", point, stream_allowed=at)
    if request.end is not None:
        _check_point(request, "end", request.end, stream_allowed=False)
    return point, at  # type: ignore[return-value]


def _check_point(request: ChangesRequest, which: str, point: object, stream_allowed: bool) -> None:
    kinds = POINT_KINDS + (("stream",) if stream_allowed else ())
    if not (isinstance(point, dict) and len(point) == 1 and next(iter(point)) in kinds):
        raise StreamError(
            f"{request.label}: {which}= must be a mapping with one of "
            f"{', '.join(map(repr, kinds))}, like {{'version': 3}} or "
            f"{{'timestamp': '2024-01-01 00:00:00'}}, not {point!r}."
        )


def _state(
    request: ChangesRequest, source: SourceTable, history: list[Row], point: dict, at: bool
) -> int:
    try:
        return state_in_history(history, source.name, point, at)
    except ValueError as exc:
        raise StreamError(
            f"{request.label}: point {point!r}: {exc}. Give {{'version': n}} or "
            "{'timestamp': 'YYYY-MM-DD HH:MM:SS'}."
        ) from exc


def _first_version(
    run: RunSql,
    find_stream: StreamLookup,
    request: ChangesRequest,
    source: SourceTable,
    history: list[Row],
    start: tuple[dict, bool],
) -> int:
    """The first version read: the one after the start state."""
    point, at = start
    if "stream" not in point:
        return _state(request, source, history, point, at) + 1
    return _stream_offset(run, find_stream, request, source, str(point["stream"])) + 1


def _stream_offset(
    run: RunSql, find_stream: StreamLookup, request: ChangesRequest, source: SourceTable, name: str
) -> int:
    """The offset of stream `name`, which must be a stream on this very table."""
    record = find_stream(name)
    if record is None:
        raise StreamError(
            f"{request.label}: at={{'stream': {name!r}}} names no stream. Run "
            "`dbt run-operation show_streams` to list the streams."
        )
    if record.source_table.lower() != source.name.lower():
        raise StreamError(
            f"{request.label}: stream {name} is on {record.source_table}, not {source.name}; "
            "name a stream on this table."
        )
    if source_table_id(run, source).table_id != record.source_id:
        raise StreamError(
            f"{request.label}: stream {name}'s offset is a version of an earlier table named "
            f"{source.name} (it was dropped and created again); its offset means nothing for "
            "this one. Give a version or timestamp."
        )
    return record.offset_version


def _interval(
    request: ChangesRequest,
    source: SourceTable,
    history: list[Row],
    pin: SourceVersion,
    first: int,
) -> Interval:
    """first..last, checked against the history that exists (its log, up to the pin)."""
    last = pin.version
    if request.end is not None:
        last = _state(request, source, history, request.end, True)
    versions = sorted(int(row["version"]) for row in history)
    oldest = versions[0] if versions else 0
    for which, state in (("start", first - 1), ("end", last)):
        if not oldest - 1 <= state <= pin.version:
            raise StreamError(
                f"{request.label}: the {which} state (version {state}) is outside the history "
                f"of {source.name}, whose versions run from {oldest} to {pin.version}."
            )
    if last < first - 1:
        raise StreamError(
            f"{request.label}: end (version {last}) is before the start state (version "
            f"{first - 1}); give an end at or after the start."
        )
    when = {int(row["version"]): row["timestamp"] for row in history}
    return Interval(first, last, when.get(last, pin.timestamp))
