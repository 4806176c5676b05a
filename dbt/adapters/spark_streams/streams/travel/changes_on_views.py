"""`changes()` on a view: the view's change records between two of its states, read-only.

A view has no versions of its own, so its points are moments (`{'timestamp': t}`: every base
table as of t) or a view stream's offsets (`{'stream': name}`: each base table at the offset of
that stream's table stream). Each base table's interval is read and checked as `changes()` on
that table checks it (changes.py); the view's rows come from those intervals as a view
stream's do (views/algebra.py).
"""

from dataclasses import replace

from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.records.netting import (
    Snapshot,
    append_only_sql,
    empty_sql,
    net_changes_sql,
)
from dbt.adapters.spark_streams.streams.sql.quoting import quote_path
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.travel.changes import (
    ChangesRequest,
    StreamLookup,
    information_mode,
    marked,
    table_interval,
)
from dbt.adapters.spark_streams.streams.views.algebra import (
    TableInterval,
    table_stream_name,
    view_change_range,
)
from dbt.adapters.spark_streams.streams.views.definition import (
    read_view_definition,
    spelled_view_key,
)


def view_changes_sql(
    run: RunSql,
    pins: dict[str, SourceVersion],
    find_stream: StreamLookup,
    request: ChangesRequest,
) -> str:
    """The SQL of the view's change records between the request's two points."""
    if request.empty:
        return _empty_view_changes_sql(run, request)
    mode = information_mode(request)
    _check_points(request)
    view = read_view_definition(run, request.schema, request.identifier, request.label)
    key = spelled_view_key(request.label, request.unique_key, view.columns, view.name)
    intervals, read = {}, []
    for table in dict.fromkeys(view.tables):
        schema, identifier = table.replace("`", "").split(".", 1)
        on_table = replace(
            request,
            schema=schema,
            identifier=identifier,
            at=_on_table(request.at, table),
            before=_on_table(request.before, table),
            unique_key=(),
        )
        source, interval = table_interval(run, pins, find_stream, on_table)
        read.append(interval)
        end = SourceVersion(interval.last, interval.last_time)
        intervals[table] = TableInterval(source, interval.first - 1, end)
    change = view_change_range(view, key, intervals, mode == "append_only")
    sql = append_only_sql(change) if mode == "append_only" else net_changes_sql(change)
    return marked(sql, *read)


def _empty_view_changes_sql(run: RunSql, request: ChangesRequest) -> str:
    """dbt's --empty: the columns of `changes()` on the view and no rows."""
    information_mode(request)
    view = read_view_definition(run, request.schema, request.identifier, request.label)
    key = spelled_view_key(request.label, request.unique_key, view.columns, view.name)
    relation = f"select * from {quote_path(request.schema, request.identifier)}"
    return empty_sql(Snapshot(view.name, view.columns, key, 0, "1970-01-01", relation=relation))


def _check_points(request: ChangesRequest) -> None:
    for which, point in (("at", request.at), ("before", request.before), ("end", request.end)):
        if which != "at" and isinstance(point, dict) and "stream" in point:
            raise StreamError(
                f"{request.label}: {which}= takes {{'timestamp': 'YYYY-MM-DD HH:MM:SS'}} on a "
                f"view (every table as of that time), not {point!r}; a view stream's offsets "
                "are a start point: give them as at=."
            )
        if isinstance(point, dict) and "version" in point:
            raise StreamError(
                f"{request.label}: {which}={{'version': ...}} names a version of one table, "
                "and a view has none of its own; give {'timestamp': 'YYYY-MM-DD HH:MM:SS'} "
                "(every table as of that time) or, for at=, {'stream': name} (a view stream's "
                "offsets)."
            )


def _on_table(point: dict | None, table: str) -> dict | None:
    """The point as the base table's own: a view stream's offset on that table."""
    if isinstance(point, dict) and "stream" in point:
        return {"stream": table_stream_name(str(point["stream"]), table)}
    return point
