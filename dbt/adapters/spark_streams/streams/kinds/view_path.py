"""The path a view stream's build takes, and what it reads on it.

A build reads a view's changes term by term, each other table through the change set's
join-key ranges where that lets Delta skip files (plan_view_read, views/pruning.py). And it
chooses between two paths: its changes MERGEd into the target, or the target
rebuilt from the view, whichever the estimate says is cheaper (views/cost.py).

The stream still returns its changes' SQL: whether the build may rebuild is known only once
every stream() call of the model has run (a model reading other streams too, or a strategy
other than apply_changes, cannot be rebuilt from one view), so the offer goes to the build,
and its plan takes it or leaves it (builds/build.py). A rebuild is the model over the view's
rows at the same pins as INSERTs (its initial rows), written in one commit with the same
offsets, so the target ends as the incremental path would leave it. A model whose
`incremental` is 'strict' fails instead, before anything is written.
"""

from collections.abc import Callable

from dbt.adapters.spark_streams.streams.builds.build import (
    ColumnRanges,
    RebuildOffer,
    StreamBuild,
)
from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.delta.source import latest_version
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.delta_table import DELTA_TABLE
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.records.key_ranges import (
    MOST_RANGES,
    can_range,
    key_ranges_sql,
    target_predicate,
    wants_ranges,
)
from dbt.adapters.spark_streams.streams.records.netting import append_only_sql, net_changes_sql
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.quoting import quote
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.views.algebra import (
    TableInterval,
    change_rows_sql,
    table_stream_name,
    view_change_range,
)
from dbt.adapters.spark_streams.streams.views.cost import (
    NO_KEYS,
    TableSizes,
    ViewCost,
    ViewPlan,
    readable,
    recompute_cost,
)
from dbt.adapters.spark_streams.streams.views.definition import (
    ViewDefinition,
    read_view_definition,
)
from dbt.adapters.spark_streams.streams.views.lineage import column_ranges, column_source
from dbt.adapters.spark_streams.streams.views.pruning import (
    AUTO_MIN_JOIN_BYTES,
    ChangeRanges,
    PruneInputs,
    equi_joins,
    term_prunes,
)


def estimate(
    run: RunSql, config: ConsumerConfig, plan: ViewPlan, ranged: str = ""
) -> ViewCost | None:
    """The cost of the next read against a rebuild; None when the view is smaller than the
    model's rebuild_min_bytes, where either path is quick and builds stay incremental."""
    if plan.view_bytes < config.rebuild_min_bytes:
        return None
    return plan.cost(run, config.recomputes_input, ranged)


def consider_rebuild(
    run: RunSql, build: StreamBuild, stream: str, plan: ViewPlan, stream_sql: str, rows_sql: str
) -> None:
    """Offer the build a rebuild when the estimate says it is cheaper (a 'strict' model fails
    here instead); `rows_sql` is the view's rows at the pins, as INSERTs."""
    config = build.config
    if not build.consuming or config is None:
        return
    ranged = recompute_ranges(run, build, plan, stream_sql)
    if not config.rebuilds_from_view and config.incremental != "strict":
        return  # no rebuild to offer and nothing to refuse: no estimate needed
    cost = estimate(run, config, plan, ranged)
    offer_rebuild(build, stream, plan.view.name, cost, (stream_sql, rows_sql))


def recompute_ranges(run: RunSql, build: StreamBuild, plan: ViewPlan, stream_sql: str) -> str:
    """A materialized view whose refresh recomputes groups (streams/mv/) reads its input
    through the ranges of a group key in the change (streams/records/key_ranges.py), so Delta
    skips the files that hold none of the changed groups: the predicate over the input's rows
    goes to the build, the same over the input's table is returned for the estimate. ''
    where there is none (_ranges)."""
    if build.config is None:
        return ""
    over_rows, over_table = _ranges(run, build.config, plan, stream_sql)
    build.recompute_ranges = over_rows
    return over_table


def _ranges(
    run: RunSql, config: ConsumerConfig, plan: ViewPlan, stream_sql: str
) -> tuple[str, str]:
    """The change's ranges of the first group key that is an integer column of the input's
    one table, as predicates over the input's rows and over that table; ('', '') where no key
    is, or the model's key_ranges says no (by default: an input under 256 MiB). The table's
    column is the one the input's column passes on (views/lineage.py), whatever a subquery in
    FROM renamed it to."""
    if len(plan.view.tables) != 1:
        return "", ""
    types = _column_types(plan.view, plan.intervals)
    keys = [
        (key, found[1])
        for key, _ in config.recompute_keys
        if (found := column_source(plan.view, key)) is not None and can_range(types(*found))
    ]
    if not keys or not wants_ranges(config.key_ranges, plan.view_bytes):
        return "", ""
    column, source = keys[0]
    rows = run(key_ranges_sql(f"({stream_sql})", quote(column), MOST_RANGES))
    if not rows:  # the tables changed, the input's rows did not: no group is recomputed
        return NO_KEYS, NO_KEYS
    return target_predicate(quote(column), rows), target_predicate(quote(source), rows)


def offer_rebuild(
    build: StreamBuild,
    stream: str,
    view: str,
    cost: ViewCost | None,
    sql: tuple[str, str] = ("", ""),
) -> None:
    """Offer the build a rebuild when `cost` says it is cheaper; a 'strict' model fails here
    instead. `sql`: the SQL the stream returned and the rows that replace it in the model's."""
    config = build.config
    if config is None or cost is None or not cost.rebuild_is_cheaper:
        return
    if config.incremental == "strict":
        raise _refused(config, stream, view, cost)
    build.rebuild_offer = RebuildOffer(stream, cost.reason(), *sql)


def _refused(config: ConsumerConfig, stream: str, view: str, cost: ViewCost) -> StreamError:
    """A 'strict' model's (a materialized view's refresh: 'incremental') refused rebuild."""
    if config.materialized_view:
        return StreamError(
            f"Model {config.model} would refresh fully: {cost.reason()}. Its refresh is "
            "'incremental', so nothing was written and no offset moved. Set refresh: 'auto' "
            "to let such refreshes run the whole query, or set rebuild_min_bytes above its "
            f"input's {readable(cost.rebuild_bytes)} to refresh it incrementally whatever it "
            "reads."
        )
    return StreamError(
        f"Model {config.model}: stream {stream} on view {view} would be "
        f"cheaper to rebuild: {cost.reason()}. The model's incremental is 'strict', so "
        "nothing was written and no offset moved. Cluster the view's tables by their join "
        "keys so the change reads fewer files, or set incremental='auto' to let such "
        "builds rebuild the target."
    )


def explain_view_path(
    run: RunSql,
    record: StreamRecord,
    offsets: dict[str, int],
    consumer: ConsumerConfig,
    alone: bool,
) -> list[str]:
    """What the next build of `consumer` reads of the view stream `record` and the path it
    takes, with why; nothing is consumed (the change sets' key ranges are read). `offsets`
    holds the consumer's committed offsets by stream name; `alone` whether the model reads
    no other stream."""
    schema, identifier = (part.strip("`") for part in record.source_table.split("`.`"))
    view = read_view_definition(run, schema, identifier, record.name)
    if view.fingerprint != record.source_id:
        return [
            f"  view {view.name} was redefined since the stream was created: the next build "
            "fails; rebuild the model with --full-refresh"
        ]
    intervals, lines = {}, []
    for table in dict.fromkeys(view.tables):
        offset = offsets.get(table_stream_name(record.name, table))
        if offset is None:
            return [f"  the offset on {table} is missing: rebuild the model with --full-refresh"]
        source_schema, source_identifier = table.replace("`", "").split(".", 1)
        entry = CatalogEntry(run, source_schema, source_identifier)
        source = DELTA_TABLE.describe(run, entry, record.name)
        pin = DELTA_TABLE.latest(run, source)
        intervals[table] = TableInterval(source, offset, pin)
        lines.append(f"  table {table}: offset version {offset}, latest version {pin.version}")
    if not any(interval.changed for interval in intervals.values()):
        return [*lines, "  path: none (nothing pending: the next build writes nothing)"]
    read = plan_view_read(run, consumer.key_ranges, view, intervals)
    for index, predicates in read.prunes.items():
        for position, predicate in predicates.items():
            shown = predicate if len(predicate) <= 100 else predicate[:97] + "..."
            lines.append(
                f"  the change of {view.tables[index]} reads {view.tables[position]} where {shown}"
            )
    append_only = record.mode == "append_only"
    change = view_change_range(view, record.unique_key, intervals, append_only, read.prunes)
    stream_sql = append_only_sql(change) if append_only else net_changes_sql(change)
    return [*lines, f"  path: {_path(run, consumer, read, stream_sql, alone)}"]


def _path(
    run: RunSql, consumer: ConsumerConfig, read: ViewPlan, stream_sql: str, alone: bool
) -> str:
    """The path the build would take, and why (a materialized view's recompute counted
    through the change's ranges of its group key, as the build reads it)."""
    held = f"the view's tables hold {readable(read.view_bytes)}"
    ranged = _ranges(run, consumer, read, stream_sql)[1] if consumer.recomputes_input else ""
    return _estimated_path(consumer, estimate(run, consumer, read, ranged), held, alone)


def _estimated_path(
    consumer: ConsumerConfig, cost: ViewCost | None, held: str, alone: bool = True
) -> str:
    """The path an estimate (None: none, under rebuild_min_bytes; `held` says what the
    tables hold) leaves the build, and why."""
    if cost is None:
        return (
            f"incremental ({held}, under the model's rebuild_min_bytes of "
            f"{readable(consumer.rebuild_min_bytes)})"
        )
    if not cost.rebuild_is_cheaper:
        return f"incremental ({cost.reason()})"
    if consumer.incremental == "strict":
        setting = (
            "refresh is 'incremental'" if consumer.materialized_view else "incremental is 'strict'"
        )
        return f"fail, as the model's {setting} ({cost.reason()})"
    if consumer.rebuilds_from_view and alone:
        return f"rebuild ({cost.reason()})"
    return (
        f"incremental ({cost.reason()}; only an apply_changes model that reads this one "
        "stream rebuilds)"
    )


def explain_joined_path(run: RunSql, records: list[StreamRecord], consumer: ConsumerConfig) -> str:
    """The path of a refresh of a materialized view over an outer join (its table streams'
    `records`), and why: its estimate is `recompute_cost`'s."""
    tables = [record.source_table for record in records]
    changed = [
        record.source_table
        for record in records
        if latest_version(run, record.source_table).version > record.offset_version
    ]
    if not changed:
        return "none (nothing pending: the next build writes nothing)"
    sizes = TableSizes(run)
    cost = recompute_cost(sizes, tables, changed, consumer.rebuild_min_bytes)
    held = f"its tables hold {readable(sum(sizes[table] for table in tables))}"
    return _estimated_path(consumer, cost, held)


def offer_column_ranges(build: StreamBuild, stream: str, read: ViewPlan) -> None:
    """Offer the build the ranges of the column its mirror is clustered by, when the view's
    tables' change sets tell them (views/lineage.py): its MERGE then reads no more."""
    column = build.config.ranges_cluster_column if build.config is not None else None
    if column is None or read.ranges is None:
        return
    changed = [i for i, name in enumerate(read.view.tables) if read.intervals[name].changed]
    joins = equi_joins(read.view)
    rows = column_ranges(
        read.view, joins, column, changed, read.ranges, _column_types(read.view, read.intervals)
    )
    if rows is not None:
        build.column_ranges = ColumnRanges(stream, column, rows)


def _column_types(
    view: ViewDefinition, intervals: dict[str, TableInterval]
) -> Callable[[int, str], str | None]:
    """A reference's column's DESCRIBE type, by position and name."""

    def column_type(position: int, column: str) -> str | None:
        table = intervals[view.tables[position]].table
        types = dict(zip((c.lower() for c in table.columns), table.column_types, strict=False))
        return types.get(column.lower())

    return column_type


def plan_view_read(
    run: RunSql,
    key_ranges: bool | None,
    view: ViewDefinition,
    intervals: dict[str, TableInterval],
) -> ViewPlan:
    """The next read of a view's changes: per changed table's term, the predicates on the
    other tables' scans (views/pruning.py), as the model's key_ranges says: true always,
    false never, None (auto) for tables of AUTO_MIN_JOIN_BYTES or more."""
    sizes = TableSizes(run)
    joins = equi_joins(view)

    def worth_pruning(position: int) -> bool:
        if key_ranges is not None:
            return key_ranges
        return sizes[view.tables[position]] >= AUTO_MIN_JOIN_BYTES

    column_type = _column_types(view, intervals)
    ranges = ChangeRanges(run, lambda position: change_rows_sql(intervals[view.tables[position]]))
    inputs = PruneInputs(ranges, column_type, worth_pruning)
    prunes = {
        index: term_prunes(joins, index, inputs)
        for index, name in enumerate(view.tables)
        if joins and intervals[name].changed
    }
    return ViewPlan(view, intervals, prunes, sizes, ranges)
