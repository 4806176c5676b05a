"""One model's build, from its first `stream()` call to its commit.

The life cycle has three named steps, each run once:

- `begin`: a consuming build of an existing target takes its streams' offsets from the
  target's last stream commit (reconciliation; the registry may lag behind it).
- reading streams (resolve.py): each `stream()` call pins its source, checks it and returns
  the change SQL; the offsets to move to and the source writes needed are recorded here.
- `finish`: the source writes, then the ONE write statement with the new offsets in its
  commit, a check that it landed, and the offsets queued for the registry.

The engine runs SQL through `run` only; the adapter passes in what it owns: the registry,
how to run a source write (threads take turns), and `at_step`, called at each step of the
commit protocol (the crash tests kill the process there; otherwise it does nothing).
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.builds.pass_through import passes_through
from dbt.adapters.spark_streams.streams.delta.schema_changes import SchemaReads, model_name
from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.delta.type_widening import (
    CAST_OVERFLOW,
    TypeChange,
    cannot_follow,
)
from dbt.adapters.spark_streams.streams.errors import StreamError, reads_no_stream
from dbt.adapters.spark_streams.streams.offsets.commit import (
    BuildCommit,
    RunWithConfs,
    latest_commit_for,
    marker_confs,
    run_with_commit,
    sql_confs,
    verify_landed,
)
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.offsets.write_counts import WriteCounts
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql

AtStep = Callable[[str], None]
MAX_RECORDS_PER_FILE = "spark.sql.files.maxRecordsPerFile"


@dataclass(frozen=True)
class BuildOutcome:
    """dbt's result line for the build, what its write did when it consumed streams, and the
    path it took ('incremental', or 'rebuild' when it rebuilt its target from a view)."""

    message: str
    counts: WriteCounts | None = None
    path: str | None = None


@dataclass(frozen=True)
class RebuildOffer:
    """A view stream's offer to rebuild the target instead of writing its changes
    (kinds/view_rebuild.py): why, the SQL the stream returned, and the view's rows at the
    same pins as INSERTs, which replace it in the model's SQL."""

    stream: str
    reason: str
    stream_sql: str
    rows_sql: str

    def covers(self, stream: str) -> bool:
        """Whether a stream the build read is this view stream or one of its table streams."""
        return covers(self.stream, stream)


def covers(view_stream: str, stream: str) -> bool:
    """Whether `stream` is the view stream `view_stream` or one of its table streams."""
    return stream == view_stream or stream.startswith(f"{view_stream}@")


@dataclass(frozen=True)
class ColumnRanges:
    """A view stream's ranges of one of its columns in this build's changes, known from its
    tables' change sets (views/lineage.py): key ranges rows (low, high, has_null)."""

    stream: str
    column: str
    rows: list[Row]


@dataclass
class StreamBuild:
    """One model's build: its pins and the streams it read. A peek has no consumer."""

    consumer: str | None
    schema: str
    target: str
    target_exists: bool
    full_refresh: bool
    auto_enable_change_tracking: bool
    max_data_extension_days: int = 0
    config: ConsumerConfig | None = None  # a consumer's, parsed by its first stream() call
    # dbt's flag that made this build a dry run ('--empty', '--sample'), if one did.
    dry_run: str = ""
    project_consumers: frozenset[str] = frozenset()
    last_txn_version: int = 0
    warnings: list[str] = field(default_factory=list)
    prepared: set[str] = field(default_factory=set)
    source_writes: list[tuple[str, str]] = field(default_factory=list)
    registered: dict[str, StreamRecord | None] = field(default_factory=dict)
    committed: tuple[StreamRecord, ...] = ()
    moves: bool = False
    only_appends: bool = True  # every stream's source only gained rows (delta/appends.py)
    only_deletes: bool = True  # every stream's source only lost rows (delta/appends.py)
    change_rows: int | None = 0  # at most this many rows (delta/change_size.py); None: unknown
    pins: dict[str, SourceVersion] = field(default_factory=dict)
    reads: dict[str, tuple[StreamRecord, str]] = field(default_factory=dict)
    schema_reads: SchemaReads = field(default_factory=SchemaReads)
    rebuild_offer: RebuildOffer | None = None
    # a view stream's rows at the build's pins as INSERTs, by stream (a materialized view
    # recomputes groups from them, streams/mv/)
    view_rows: dict[str, str] = field(default_factory=dict)
    # a materialized view's recompute read through its group key's ranges in this build's
    # change: the predicate over the input's rows (kinds/view_path.py)
    recompute_ranges: str = ""
    rebuilt_because: str = ""  # the plan took the offer: the target is rebuilt, for this
    column_ranges: ColumnRanges | None = None  # offered by a view stream
    target_ranges: ColumnRanges | None = None  # taken by the plan: the model passes it on
    widened: tuple[str, ...] = ()  # the target's columns widened before the write ('v: a -> b')
    notes: tuple[str, ...] = ()  # said after the counts ('skipped 2 bad events')
    target_columns: tuple[str, ...] = ()  # the target's, as described before the write
    change_columns: tuple[str, ...] = ()  # the change set's, as described
    unwidened: tuple[TypeChange, ...] = ()  # widenings a target without type widening lacks

    @property
    def has_write(self) -> bool:
        """Whether a write is due: a stream is created or its source has new commits. A dry
        run (dbt's --empty) has nothing to write to a target that exists."""
        return not self.dry_run and (self.moves or not self.reads)

    @property
    def consuming(self) -> bool:
        return self.consumer is not None

    @property
    def recreates_streams(self) -> bool:
        """A full refresh, or a consumer's first build, (re)creates every stream it reads."""
        return self.full_refresh or (self.consuming and not self.target_exists)


def begin(run: RunSql, build: StreamBuild) -> StreamBuild:
    """Take the streams' offsets from the target's last stream commit, where they count.

    The registry is not read: a build that writes appends its streams' new offsets anyway,
    and a build without a write rolls the registry forward in `finish`.
    """
    if not (build.consuming and build.target_exists):
        return build
    assert build.consumer is not None
    commit = latest_commit_for(run, build.target, build.consumer, not build.full_refresh)
    if commit is None:
        return build
    build.last_txn_version = commit.txn_version
    if commit.fresh_target:
        # A dry run (--empty) created the target empty: its streams start over.
        build.target_exists = False
        return build
    build.committed = commit.records
    for record in commit.records:
        build.registered[record.name] = record
    return build


@dataclass(frozen=True)
class BuildPlan:
    """What the materialization does, decided once: rebuild the target (first build,
    --full-refresh, or a relation there that is not a Delta table, which is dropped first),
    write the changes into it, or write nothing (no source committed since the offsets)."""

    consumer: ConsumerConfig
    rebuild: bool
    drop_existing: bool
    has_changes: bool
    write_strategy: str = ""  # the strategy whose macro writes the changes
    broadcast_changes: bool = False  # hint Spark to broadcast the changes (delta/change_size.py)
    rebuild_offer: RebuildOffer | None = None  # a view stream's rebuild, taken
    # a rebuild not asked to replace the table (a taken offer, recreated streams) overwrites
    keeps_table: bool = False  # its rows, keeping the table id that streams following it need

    def model_sql(self, sql: str) -> str:
        """The model's SQL for the write: for a taken rebuild, with the view's rows in place
        of its changes."""
        offer = self.rebuild_offer
        return sql if offer is None else sql.replace(offer.stream_sql, offer.rows_sql, 1)


def plan(
    consumer: ConsumerConfig,
    build: StreamBuild | None,
    existing_is_delta: bool | None,
    full_refresh: bool,
    sql: str = "",
) -> BuildPlan:
    """The plan of a build whose target is missing (None), a Delta table (True) or another
    relation (False). A build that (re)creates its streams rebuilds its target, as one whose
    target --empty created empty does (see `begin`), and so does one that takes a view
    stream's offer. A model without a stream() call of its own has no build: refused."""
    if build is None:
        raise reads_no_stream(consumer.model)
    recreates = build.consuming and build.recreates_streams
    rebuild = not existing_is_delta or full_refresh or recreates
    offer = None if rebuild else _taken_offer(consumer, build, sql)
    if offer is not None and build.has_write:
        build.rebuilt_because = offer.reason
        rebuild = True
    else:
        offer = None
    if not rebuild:
        build.target_ranges = _taken_ranges(build, sql)
    return BuildPlan(
        consumer=consumer,
        rebuild=rebuild,
        drop_existing=existing_is_delta is False,
        has_changes=not rebuild and build.has_write,
        write_strategy=_write_strategy(consumer, build),
        broadcast_changes=broadcasts(consumer, build),
        rebuild_offer=offer,
        keeps_table=rebuild and existing_is_delta is True and not full_refresh,
    )


def _taken_ranges(build: StreamBuild, sql: str) -> ColumnRanges | None:
    """A view stream's known ranges of a column, when they are the model's too: the model
    reads that view stream only and passes the column through (pass_through.py)."""
    known = build.column_ranges
    if known is None or not all(covers(known.stream, stream) for stream in build.reads):
        return None
    return known if passes_through(sql, known.column) else None


def _taken_offer(
    consumer: ConsumerConfig, build: StreamBuild | None, sql: str
) -> RebuildOffer | None:
    """A view stream's rebuild offer, when the model's rows over the view's rows are the
    target: an apply_changes mirror that reads that view stream and nothing else."""
    offer = build.rebuild_offer if build is not None else None
    if offer is None or build is None or not consumer.rebuilds_from_view:
        return None
    if not all(offer.covers(stream) for stream in build.reads):
        return None
    if consumer.materialized_view:
        return offer  # its query over the view's rows (streams/mv/)
    return offer if sql.count(offer.stream_sql) == 1 else None


def broadcasts(consumer: ConsumerConfig, build: StreamBuild | None) -> bool:
    """Whether the history bounds the change set under the model's broadcast_change_rows (a
    view stream's too where the view reads its one table once: view streams refuse generator
    functions, so each of the table's change rows is at most one of the view's)."""
    if build is None or not build.reads or build.change_rows is None:
        return False
    return 0 < build.change_rows <= consumer.broadcast_change_rows


def _write_strategy(consumer: ConsumerConfig, build: StreamBuild | None) -> str:
    """The consumer's strategy, except for a mirror of sources that only gained rows since its
    offsets, written by an INSERT (`append`), or only lost rows, written by a MERGE with only
    its delete clause (`apply_deletes`) (delta/appends.py)."""
    if consumer.strategy != "apply_changes" or build is None or not build.reads:
        return consumer.strategy
    if build.only_appends:
        return "append"
    return "apply_deletes" if build.only_deletes else consumer.strategy


@dataclass(frozen=True)
class BuildEnv:
    """What `finish` needs from the adapter. `with_confs` runs a statement with session confs
    around it; by default through `run`, as SQL SET / RESET."""

    run: RunSql
    registry: Registry
    write_source: Callable[[str, str], None]
    at_step: AtStep
    with_confs: RunWithConfs | None = None

    def run_with_confs(self, statement: str, confs: dict[str, str]) -> list[Row]:
        """Run `statement` with `confs` set around it and only around it."""
        return (self.with_confs or sql_confs(self.run))(statement, confs)


def finish(
    env: BuildEnv, node_id: str, build: StreamBuild | None, statement: str | None, confs: dict
) -> BuildOutcome:
    """Run the build's one write with the streams' new offsets in the same Delta commit, and
    return dbt's result for it. No statement: nothing was pending, and nothing is written."""
    if build is not None and build.dry_run:
        return BuildOutcome(_finish_dry_run(env, node_id, build, statement, confs))
    if statement is None:
        if build is not None:
            env.registry.queue_if_behind(build.committed)
        return BuildOutcome("OK, no pending changes")
    if build is None or not build.reads:
        env.run_with_confs(statement, confs)
        return BuildOutcome("OK")
    for source_write, message in build.source_writes:
        env.write_source(source_write, message)
    records = [record for record, _ in build.reads.values()]
    txn_version = max([build.last_txn_version, *(r.txn_version for r in records)]) + 1
    stamped = tuple(replace(record, txn_version=txn_version) for record in records)
    commit = BuildCommit(node_id, uuid.uuid4().hex, txn_version, stamped)
    env.at_step("during_write")
    # The write runs the change read: a read across a source's schema change may need
    # Delta's schema check off, for this statement only (streams/delta/schema_changes.py).
    confs = {**confs, **build.schema_reads.confs}
    reported = _write(env, build, statement, commit, confs)
    if reported:
        counts = WriteCounts.from_merge_row(reported[0])
    else:
        # A MERGE that commits reports its metrics row, and one Delta skipped as already
        # applied reports nothing; other writes report nothing either way, so the target's
        # history decides (and holds their counts).
        counts = verify_landed(env.run, build.target, commit)
    env.at_step("after_commit")
    env.registry.queue(stamped)
    env.registry.queue_if_behind(build.committed)
    names = ", ".join(record.name for record in stamped)
    if build.rebuilt_because:
        target = build.target.rsplit(".", 1)[-1].strip("`")
        message = f"OK, rebuilt {target}: {build.rebuilt_because}; consumed {names}"
        return BuildOutcome(message, counts, "rebuild")
    widened = f"; widened {', '.join(build.widened)}" if build.widened else ""
    notes = "".join(f"; {note}" for note in build.notes)
    message = f"OK, consumed {names}: {counts.summary()}{widened}{notes}"
    return BuildOutcome(message, counts, "incremental")


def _write(
    env: BuildEnv, build: StreamBuild, statement: str, commit: BuildCommit, confs: dict
) -> list[Row]:
    """The build's write; once more with Delta's schema check off if Delta refused to read a
    range across a MERGE or write that evolved the source's schema (schema_changes.py)."""
    try:
        try:
            return run_with_commit(env.run_with_confs, statement, commit, confs)
        except StreamError:
            raise
        except Exception as exc:
            if not build.schema_reads.read_across_evolution(env.run, str(exc), commit.consumer):
                raise
        return run_with_commit(
            env.run_with_confs, statement, commit, {**confs, **build.schema_reads.confs}
        )
    except StreamError:
        raise
    except Exception as exc:
        raise _delta_refused(commit, exc, build) from exc


def _delta_refused(commit: BuildCommit, exc: Exception, build: StreamBuild) -> Exception:
    """Delta's error from a build's write, once, with the streams and the model named (dbt
    shows it as the model's error); a value of a widened column that an older target could
    not take, as the sentence that says so; any other error as it came."""
    message = str(exc)
    if build.unwidened and CAST_OVERFLOW in message:
        blocked = list(build.unwidened)
        return StreamError(cannot_follow(model_name(commit.consumer), build.target, blocked))
    start = message.find("[DELTA_")
    if start < 0:
        return exc
    delta = message[start:].strip()
    streams = ", ".join(record.name for record in commit.records)
    return StreamError(
        f"The build of {model_name(commit.consumer)} reading stream(s) {streams} failed in "
        f"Delta, and nothing was written: no offset moved. Delta said: {delta}"
    )


def _finish_dry_run(
    env: BuildEnv, node_id: str, build: StreamBuild, statement: str | None, confs: dict
) -> str:
    """dbt's --empty (or --sample, whose time window a stream cannot take without consuming
    part of its changes): the target is created empty where it is missing, and no offset moves.
    The created target is marked so that its next real build starts its streams over instead
    of resuming a registered offset into an empty table."""
    if statement is None:
        return dry_run_message(build.dry_run, created=False)
    commit = BuildCommit(node_id, uuid.uuid4().hex, build.last_txn_version, (), True)
    env.run_with_confs(statement, {**confs, **marker_confs(commit)})
    return dry_run_message(build.dry_run, created=True)


def dry_run_message(flag: str, created: bool) -> str:
    """The result line of a dry run under dbt's `flag` (a materialized view's too)."""
    return f"OK, {flag}: {'target created empty, ' if created else ''}nothing consumed"


def write_confs(file_rows: int) -> dict[str, str]:
    """Session confs for a target's write. A cap on rows per file keeps a stream target in
    many small files; a later MERGE then rewrites (and re-reads) only the files its keys
    touch instead of files as large as the table."""
    return {MAX_RECORDS_PER_FILE: str(file_rows)} if file_rows > 0 else {}
