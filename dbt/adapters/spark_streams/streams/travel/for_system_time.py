"""`for_system_time()`: a Delta table's row versions with `_sys_start` / `_sys_end`, filtered
as a Netezza system-time travel query is (docs/concepts/contract.md, time travel).

Row versions come from the Change Data Feed: each insert or update post-image opens one, each
delete or update pre-image closes one. Versions of one row value pair up in order (the i-th
close of a value ends its i-th open), which is exact for keyed tables and for duplicate rows
alike.

AS OF and BEFORE ask for one table state: when Delta can read it, it is read as Delta's own
`VERSION AS OF` reads it, and only the start and end times come from the feed. Otherwise (and
for the periods of FROM ... TO and BETWEEN) every row version is built: Delta cannot read a
version older than its retention (DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION
_DURATION), so the rows valid when the readable history begins are the current rows with the
readable changes undone (current + closed - opened, as multisets), and they get the retention
start as `_sys_start`.
"""

from dataclasses import dataclass, field
from datetime import datetime

from dbt.adapters.spark_streams.streams.delta.source import (
    SourceTable,
    SourceVersion,
    describe_source,
    enable_command,
    latest_version,
)
from dbt.adapters.spark_streams.streams.delta.staleness import change_data_feed_on_since
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.records.column_types import comparable, row_type
from dbt.adapters.spark_streams.streams.records.netting import (
    AFTER_TYPES,
    BEFORE_TYPES,
    ChangeRange,
    feed_sql,
    row_struct,
)
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.quoting import string_literal
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql

FORMS = ("as_of", "before", "from_to", "between")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


@dataclass(frozen=True)
class SystemTimeRequest:
    """One `for_system_time()` call: exactly one form, with one time or a pair."""

    schema: str
    identifier: str
    form: str
    times: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"for_system_time({self.schema}.{self.identifier})"

    @classmethod
    def from_options(cls, schema: str, identifier: str, options: dict) -> "SystemTimeRequest":
        """The request of the macro's keyword arguments: exactly one form, with one time
        (as_of, before) or a pair (from_to, between)."""
        label = f"for_system_time({schema}.{identifier})"
        given = {form: options.get(form) for form in FORMS if options.get(form) is not None}
        if len(given) != 1:
            raise StreamError(f"{label}: give exactly one of {', '.join(FORMS)}.")
        [(form, value)] = given.items()
        single = form in ("as_of", "before")
        times = (value,) if single else tuple(value or ())
        if len(times) != (1 if single else 2):
            raise StreamError(f"{label}: {form}= takes two times, (t1, t2).")
        return cls(schema, identifier, form, times)


@dataclass(frozen=True)
class ReadableHistory:
    """Where the readable history begins: the retention start, and the first version whose
    changes Delta can still read (after the pin when none can); with the commit time of each
    version up to the pin, and the oldest commit time Delta still time-travels to."""

    start: datetime
    first_version: int
    commits: dict[int, datetime] = field(default_factory=dict)
    travel_cutoff: datetime = datetime.min

    def state_to_read(self, moment: datetime, strictly: bool) -> int | None:
        """The version whose state holds at `moment` (committed at or, `strictly`, before
        it) when Delta can read it directly and its changes since are readable; else None."""
        done = [
            v for v, ts in self.commits.items() if ts < moment or (not strictly and ts == moment)
        ]
        if not done:
            return None
        version = max(done)
        readable = version >= self.first_version and self.commits[version] >= self.travel_cutoff
        return version if readable else None


def retention_start(
    source: SourceTable, history: list[Row], pin: SourceVersion, now: datetime
) -> ReadableHistory:
    """The later of `now` minus the table's retention and the commit that turned Change Data
    Feed on (the oldest commit in the log when no switch is left in it)."""
    since = change_data_feed_on_since(history, pin.version, source.change_data_feed)
    if since is None:
        raise StreamError(
            f"Time travel on {source.name} reads its Change Data Feed, which is off. Turn it "
            f"on with\n  {enable_command(source.name)}\nThe history starts then."
        )
    when = {int(row["version"]): row["timestamp"] for row in history}
    cutoff = now - min(source.retention.deleted_files, source.retention.log)
    start = max(cutoff, when.get(since, cutoff))
    readable = [v for v, t in when.items() if v >= since and t >= start]
    first = min(readable, default=pin.version + 1)
    return ReadableHistory(start, first, when, now - source.retention.deleted_files)


def check_times(request: SystemTimeRequest, start: datetime) -> tuple[datetime, ...]:
    """The request's times, each at or after the retention start as the form needs: AS OF
    and BETWEEN at or after it; BEFORE and FROM ... TO after it, except FROM's t1, which may
    be the retention start itself."""
    times = tuple(_parse(request, text) for text in request.times)
    for index, moment in enumerate(times):
        strict = request.form == "before" or (request.form == "from_to" and index == 1)
        if moment < start or (strict and moment == start):
            raise StreamError(
                f"{request.label}: {moment:{TIME_FORMAT}} is before the retention start "
                f"{start:{TIME_FORMAT}}, the earliest time the table's history can answer "
                f"({'after' if strict else 'at or after'} it). Use retention_start() for "
                "the earliest time."
            )
    return times


def _parse(request: SystemTimeRequest, text: str) -> datetime:
    try:
        return datetime.fromisoformat(str(text))
    except ValueError as exc:
        raise StreamError(
            f"{request.label}: {text!r} is not a time; give 'YYYY-MM-DD HH:MM:SS[.ffffff]'."
        ) from exc


def predicate(form: str, times: tuple[datetime, ...]) -> str:
    """The boundary rules on `_sys_start` / `_sys_end` (docs/concepts/contract.md). An empty
    period (FROM t1 >= t2, BETWEEN t1 > t2) holds no rows."""
    if (form == "from_to" and times[0] >= times[1]) or (form == "between" and times[0] > times[1]):
        return "false"
    t = [f"timestamp{string_literal(moment.strftime(TIME_FORMAT))}" for moment in times]
    if form == "as_of":
        return f"_sys_start <= {t[0]} and (_sys_end is null or _sys_end > {t[0]})"
    if form == "before":
        return f"_sys_start < {t[0]} and (_sys_end is null or _sys_end >= {t[0]})"
    if form == "from_to":
        return f"_sys_start < {t[1]} and (_sys_end is null or _sys_end > {t[0]})"
    return f"_sys_start <= {t[1]} and (_sys_end is null or _sys_end > {t[0]})"


def readable_history(
    run: RunSql,
    pins: dict[str, SourceVersion],
    now: datetime,
    schema: str,
    identifier: str,
    reader: str,
) -> tuple[SourceTable, SourceVersion, ReadableHistory]:
    """The table, the version pinned for the build, and where its readable history begins
    (`now` and the pin are the build's, so every call in one build agrees)."""
    source = describe_source(run, CatalogEntry(run, schema, identifier), reader)
    pin = pins.setdefault(source.name, latest_version(run, source.name))
    history = [r for r in run(f"describe history {source.name}") if r["version"] <= pin.version]
    return source, pin, retention_start(source, history, pin, now)


def system_time_sql(
    run: RunSql,
    pins: dict[str, SourceVersion],
    now: datetime,
    request: SystemTimeRequest,
) -> str:
    """The row versions valid at (or during) the request's times."""
    source, pin, readable = readable_history(
        run, pins, now, request.schema, request.identifier, request.label
    )
    times = check_times(request, readable.start)
    if request.form in ("as_of", "before"):
        version = readable.state_to_read(times[0], strictly=request.form == "before")
        if version is not None:
            return state_versions_sql(source, pin, readable, version)
    versions = row_versions_sql(source, pin, readable)
    return f"select * from ({versions}) where {predicate(request.form, times)}"


def state_versions_sql(
    source: SourceTable, pin: SourceVersion, readable: ReadableHistory, version: int
) -> str:
    """The row versions valid in one table state, read as Delta's own time travel reads it
    (`VERSION AS OF`), with their start and end times from the change feed around it.

    Copies of a value close oldest first (as in `row_versions_sql`), so the c copies valid
    in the state are the value's newest c opens up to the state (the retention start for
    those older than the feed), and they end with its first c closes after it. Each value's
    opens (newest first) and closes (oldest first) are gathered into two arrays by one
    aggregate, and the state's copies of a value by another, joined once. The join is on
    `=`: `_id` is a struct, never null itself (a null column inside it compares equal, as in
    the aggregates), and with `<=>` the same query took four times as long (1M rows, 100
    commits: 13 s against 3.4 s).
    """
    row = row_type(source.columns, source.column_types)
    values = row_struct(source.columns)
    identity = comparable("_row", row)
    start = f"timestamp{string_literal(readable.start.strftime(TIME_FORMAT))}"
    state = f"select {values} as _row from {source.name} version as of {version}"
    return f"""with _events as ({_net_events_sql(source, pin, readable, identity)}),
_times as (
  select _id,
    {_times_sql(f"_n > 0 and _v <= {version}", "_n", ascending=False)} as _opens,
    {_times_sql(f"_n < 0 and _v > {version}", "-_n", ascending=True)} as _closes
  from _events group by _id
), _copies as (
  select {identity} as _id, any_value(_row) as _row, count(*) as _count from ({state}) group by 1
)
select _row.*, coalesce(try_element_at(_opens, cast(_count - _k as int)), {start}) as _sys_start,
       try_element_at(_closes, _k + 1) as _sys_end
from _copies left join _times on _copies._id = _times._id
lateral view posexplode(array_repeat(1, cast(_count as int))) _c as _k, _one"""


def _times_sql(condition: str, copies: str, ascending: bool) -> str:
    """The commit times of a value's events that meet `condition`, ordered by version
    (`ascending` or not), each repeated once per copy it opens or closes."""
    events = f"collect_list(if({condition}, struct(_v, _ts, {copies} as _repeats), null))"
    return (
        f"flatten(transform(sort_array({events}, {str(ascending).lower()}), "
        "e -> array_repeat(e._ts, cast(e._repeats as int))))"
    )


def _net_events_sql(
    source: SourceTable, pin: SourceVersion, readable: ReadableHistory, identity: str
) -> str:
    """Per row value and commit of the readable feed, opens minus closes (a no-op update, or a
    delete and insert of one value in one commit, changes nothing): `_id`, `_row`, `_v`,
    `_ts`, `_n`."""
    change = ChangeRange(
        source.name, source.columns, (), readable.first_version, pin.version,
        source.column_types, source.location,
    )  # fmt: skip
    feed = (
        f"select {row_struct(source.columns)} as _row, _commit_version as _v, "
        f"_commit_timestamp as _ts, if(_change_type in {AFTER_TYPES}, 1, -1) as _n "
        f"from {feed_sql(change)} "
        f"where _change_type in {AFTER_TYPES} or _change_type in {BEFORE_TYPES}"
    )
    return (
        f"select {identity} as _id, any_value(_row) as _row, _v, any_value(_ts) as _ts, "
        f"sum(_n) as _n from ({feed}) group by 1, _v having sum(_n) <> 0"
    )


def row_versions_sql(source: SourceTable, pin: SourceVersion, readable: ReadableHistory) -> str:
    """Every row version of the readable history, with `_sys_start` and `_sys_end`."""
    row = row_type(source.columns, source.column_types)
    identity = comparable("_row", row)
    start = f"timestamp{string_literal(readable.start.strftime(TIME_FORMAT))}"
    values = row_struct(source.columns)
    current = f"select {values} as _row from {source.name} version as of {pin.version}"
    if readable.first_version > pin.version:
        no_end = "cast(null as timestamp) as _sys_end"
        return f"select _row.*, {start} as _sys_start, {no_end} from ({current})"
    return f"""with _events as ({_net_events_sql(source, pin, readable, identity)}),
_base as (
  -- the rows valid when the readable history begins: the current ones, changes undone
  select _id, any_value(_row) as _row, sum(_n) as _n from (
    select {identity} as _id, _row, 1 as _n from ({current})
    union all select _id, _row, -_n from _events)
  group by 1 having sum(_n) > 0
), _opens as (
  select _id, _row, _start, row_number() over (partition by _id order by _v, _k) as _rank
  from (
    select _id, _row, -1 as _v, {start} as _start, _k from _base
      lateral view posexplode(array_repeat(1, cast(_n as int))) _c as _k, _one
    union all
    select _id, _row, _v, _ts, _k from _events
      lateral view posexplode(array_repeat(1, cast(_n as int))) _c as _k, _one
    where _n > 0)
), _closes as (
  select _id, _ts as _end, row_number() over (partition by _id order by _v, _k) as _rank
  from _events lateral view posexplode(array_repeat(1, cast(-_n as int))) _c as _k, _one
  where _n < 0
)
select _opens._row.*, _opens._start as _sys_start, _closes._end as _sys_end
from _opens left join _closes on _opens._id = _closes._id and _opens._rank = _closes._rank"""
