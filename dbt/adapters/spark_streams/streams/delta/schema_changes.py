"""Schema changes on a stream's source between its offset and the version a build pins.

Delta's batch Change Data Feed read (CDCReader.changesToDF, Delta 4.4) serves a range in one
schema: the end version's on a table with column mapping (the default of
spark.databricks.delta.changeDataFeed.defaultSchemaModeForColumnMappingTable, `endVersion`),
the newest on one without. A column added in the range is read as is. But Delta refuses a range
in which a commit after the first renamed or dropped a column or changed a column's type
(DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA or _SCHEMA_CHANGE), although every file of
such a range reads correctly in the new schema: column mapping reads files by physical name, so
rows from before a rename arrive under the new name and a dropped column is simply absent, and
a widened column (type widening) reads its old files in the wider type. With UNSAFE_READ on,
Delta skips that one check (a range with Change Data Feed off is still refused), and the read
is right for exactly those changes.

So when Delta refuses a range, a consuming build turns the check off, for its own write
statement only, if the changes the range holds are renames, drops, column changes and writes
that evolved the schema (mergeSchema), and no commit of the range may have replaced the schema
outright (REPLACE COLUMNS, column mapping turned off, RESTORE, a write with overwriteSchema):
the check exists for those, and with it off, rows written before column mapping was turned off
read as nulls. Those fail the build before anything is written, naming the fix; so does a peek
that would need the check off, since its SQL runs in statements the adapter does not run.

Ordinary builds pay nothing: the build reads the history of its pending commits anyway, and
only a range holding a schema change is probed, with an EXPLAIN of the read, which runs Delta's
check on the driver without a Spark job. A MERGE or a write that evolved the schema through
the writer's session (spark.databricks.delta.schema.autoMerge.enabled) leaves no trace in the
history, only a metaData action in its commit; probing every range with such a commit would
cost every build an EXPLAIN (0.07 to 0.4 s here). So those are found where Delta finds them:
when the build's write fails with Delta's refusal, the ranges are probed, and one whose
refusal a MERGE or write explains (they only add columns or widen types, which read right in
the new schema) is read across, the write run again with the check off. The failed write
committed nothing, so running it again is safe.
"""

import json
from dataclasses import dataclass, field, replace
from typing import Any

from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.catalog import reader_label
from dbt.adapters.spark_streams.streams.sql.quoting import string_literal
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql

UNSAFE_READ = (
    "spark.databricks.delta.changeDataFeed.unsafeBatchReadOnIncompatibleSchemaChanges.enabled"
)
INCOMPATIBLE = "DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_"
# Changes whose old files read correctly in the new schema, once Delta's check is off.
READ_IN_NEW_SCHEMA = ("RENAME COLUMN", "DROP COLUMNS", "CHANGE COLUMN", "CHANGE COLUMNS")
# Commits that may replace the schema outright (so may a write with overwriteSchema): never
# read across with the check off.
REPLACING = ("REPLACE COLUMNS", "REMOVE COLUMN MAPPING", "UPDATE SCHEMA", "RESTORE")
SQL_TYPES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}
# Writes that evolve a schema without a trace in the history when the writer's session has
# schema auto-merge on: added columns and, with type widening, wider types, never more.
SILENT_EVOLUTION = ("MERGE", "WRITE", "STREAMING UPDATE")
# Marks the SQL of a read-only change read (changes()) that crosses a schema change Delta reads
# only with its check off: the statement holding it runs with UNSAFE_READ on (session/cursor.py).
READ_ACROSS_MARKER = "/* dbt_spark_streams:read_across_schema_changes */"
# Marks the SQL of a changes() read whose range holds a MERGE or write that may have evolved the
# schema without a trace: if Delta refuses the statement for it, the statement (which wrote
# nothing) runs once more with the check off (session/cursor.py).
RETRY_ACROSS_MARKER = "/* dbt_spark_streams:retry_across_schema_evolution */"
# Marks the SQL of a changes() read whose range holds a commit that may have replaced the
# schema: a statement holding it never runs with the check off, whatever else it reads.
REPLACED_MARKER = "/* dbt_spark_streams:schema_may_be_replaced */"


@dataclass(frozen=True)
class SchemaRead:
    """One stream's pending range: the change it needs Delta's check off for, if any, and a
    commit that may have replaced the schema, which rules turning the check off out."""

    stream: str
    source: str
    start: int
    end: int
    check_off: Row | None = None
    replacing: Row | None = None
    commits: tuple[Row, ...] = ()  # the range's commits after its first, oldest first
    started: bool = False  # a new stream's first read, from its at= or before= point


@dataclass
class SchemaReads:
    """The schema side of a build's stream reads. The build's one write statement reads every
    stream, so a check turned off for one is off for all of them."""

    reads: list[SchemaRead] = field(default_factory=list)

    @property
    def confs(self) -> dict[str, str]:
        """Session confs for the build's write statement, the only one that runs the read
        (creating and describing the change set's view only analyze it)."""
        return {UNSAFE_READ: "true"} if self._first("check_off") else {}

    def add(self, read: SchemaRead, consumer: str) -> None:
        """Record a stream's read; refuse the build if the check would be off across a commit
        that may have replaced a schema, in this stream's range or another's."""
        self.reads.append(read)
        needs, replaced = self._first("check_off"), self._first("replacing")
        if needs is not None and replaced is not None:
            self.reads.pop()
            raise unsafe_together(read.stream, needs, replaced, consumer)

    def read_across_evolution(self, run: RunSql, error: str, consumer: str) -> bool:
        """After the build's write failed with `error`: whether Delta refused a range only
        because a MERGE or write evolved the schema, so the write may run again with the check
        off (then on in `confs`). A range that also holds a commit that may have replaced the
        schema is refused here, naming the fix; any other failure is the caller's to raise."""
        if INCOMPATIBLE not in error or self.confs:
            return False
        for index, read in enumerate(self.reads):
            if readable_as_is(run, read):
                continue
            evolved = next((row for row in read.commits if _evolves_silently(row)), None)
            if evolved is None:
                return False
            if read.replacing is not None:
                raise unsafe_together(
                    read.stream, replace(read, check_off=evolved), read, consumer
                )
            self.reads[index] = replace(read, check_off=evolved)
        return bool(self.confs)

    def _first(self, attribute: str) -> SchemaRead | None:
        return next((read for read in self.reads if getattr(read, attribute) is not None), None)


def check_schema_changes(
    run: RunSql,
    reads: SchemaReads,
    stream: str,
    pending: CommitsSinceOffset,
    consumer: str,
    consuming: bool,
    started: bool = False,
) -> None:
    """Decide how the stream's pending changes (or, `started`, a new stream's first read from
    its at= or before= point) are read across schema changes, or fail.

    A peek cannot turn the check off (its SQL runs in another model's statements), so a peek
    that would need it fails and names the consumer to build first.
    """
    read = schema_read(run, stream, pending, consumer, started)
    if read.check_off is not None and not consuming:
        raise _peek_refused(read, consumer)
    reads.add(read, consumer)


def schema_read(
    run: RunSql, stream: str, pending: CommitsSinceOffset, consumer: str, started: bool = False
) -> SchemaRead:
    """How the range reads. Delta reads a change in the range's first commit in the new schema
    with its check on, so only the commits after it count."""
    later = pending.commits[1:]
    start, end = pending.offset + 1, pending.pin
    read = SchemaRead(stream, pending.source, start, end, commits=tuple(later), started=started)
    replacing = next((row for row in later if _may_replace_schema(row)), None)
    changes = [row for row in later if _reads_in_new_schema(row)]
    if (replacing is None and not changes) or readable_as_is(run, read):
        return replace(read, replacing=replacing)
    if not changes:
        assert replacing is not None
        raise _unreadable(read, replacing, consumer)
    return replace(read, check_off=changes[0], replacing=replacing)


def may_have_evolved_silently(read: SchemaRead) -> bool:
    """Whether a MERGE or write after the range's first commit may have evolved the schema with
    no trace in the history (and nothing in the range may have replaced it)."""
    return read.replacing is None and any(_evolves_silently(row) for row in read.commits)


def readable_as_is(run: RunSql, read: SchemaRead) -> bool:
    """Whether Delta reads the range with its check on. Planning the read runs the check, and
    EXPLAIN returns a planning error as the plan's text. A probe failing for any other reason
    tells nothing, and the read then runs as it would have without this module."""
    feed = f"table_changes({string_literal(read.source)}, {read.start}, {read.end})"
    try:
        plan = " ".join(str(row.get("plan", "")) for row in run(f"explain select * from {feed}"))
    except Exception as exc:
        plan = str(exc)
    return INCOMPATIBLE not in plan


def _operation(row: Row) -> str:
    return str(row.get("operation") or "").upper()


def _parameters(row: Row) -> dict:
    return dict(row.get("operationParameters") or {})


def _flag(row: Row, name: str) -> bool:
    """A write's schema option, which Delta records in the history only when it is set."""
    return str(_parameters(row).get(name, "")).lower() == "true"


def _reads_in_new_schema(row: Row) -> bool:
    """A rename, drop or column change, or a write that evolved the schema (mergeSchema: added
    columns or, with type widening, wider types)."""
    return _operation(row) in READ_IN_NEW_SCHEMA or _flag(row, "canMergeSchema")


def _evolves_silently(row: Row) -> bool:
    return _operation(row) in SILENT_EVOLUTION and not _flag(row, "canOverwriteSchema")


def _may_replace_schema(row: Row) -> bool:
    """REPLACE COLUMNS and the like, or a write with overwriteSchema."""
    return _operation(row) in REPLACING or _flag(row, "canOverwriteSchema")


def describe_change(row: Row) -> str:
    """What a commit did to the schema, from its history entry, for an error message."""
    operation, parameters = _operation(row), _parameters(row)
    if operation == "RENAME COLUMN":
        return (
            f"renamed column {parameters.get('oldColumnPath')} to "
            f"{parameters.get('newColumnPath')}"
        )
    if operation == "DROP COLUMNS":
        names = [str(name) for name in _json(parameters.get("columns"), [])]
        return f"dropped column{'' if len(names) == 1 else 's'} {', '.join(names)}"
    if operation == "CHANGE COLUMN":
        return f"changed column {_field(_json(parameters.get('column'), {}))}"
    if operation == "CHANGE COLUMNS":
        fields = [_field(item) for item in _json(parameters.get("columns"), [])]
        return f"changed columns {', '.join(fields)}"
    if operation == "REMOVE COLUMN MAPPING":
        return "turned column mapping off (REMOVE COLUMN MAPPING)"
    if operation == "REPLACE COLUMNS":
        return "replaced its columns (REPLACE COLUMNS)"
    if operation == "RESTORE":
        return "restored an earlier version (RESTORE)"
    if _flag(row, "canOverwriteSchema"):
        return f"overwrote the table and its schema ({operation} with overwriteSchema)"
    if _flag(row, "canMergeSchema"):
        return f"evolved its schema in a write ({operation} with mergeSchema)"
    if operation in SILENT_EVOLUTION:
        return f"evolved its schema in a {operation} (schema auto-merge)"
    return f"changed its schema ({operation})"


def _json(text: object, default: Any) -> Any:
    try:
        return json.loads(str(text))
    except ValueError:
        return default


def _field(item: object) -> str:
    """`name (now bigint)` from a column of a CHANGE COLUMN(S) history entry."""
    if not isinstance(item, dict):
        return str(item)
    kind = item.get("type")
    kind = SQL_TYPES.get(kind, kind) if isinstance(kind, str) else "a complex type"
    return f"{item.get('name')} (now {kind})"


def model_name(consumer: str) -> str:
    """The model name dbt selects by (`model.project.name` -> `name`)."""
    return consumer.split(".", 2)[-1]


def _rebuild(consumer: str) -> str:
    return (
        "Nothing was read or written. Rebuild the consumer to start the stream again from the "
        f"source's current rows: dbt run -s {model_name(consumer)} --full-refresh"
    )


def _fix(read: SchemaRead, change: Row, consumer: str) -> str:
    """What to do: a new stream starts after the change (its at= or before= point is the
    model's own config, which a full refresh would read again); an existing one rebuilds."""
    if read.started:
        return (
            "Nothing was read or written. Start the stream at or after that version, e.g. "
            f"at={{'version': {_version(change)}}}, or without at= / before= (the source's "
            "current rows)."
        )
    return _rebuild(consumer)


def _version(row: Row) -> int:
    return int(row["version"])


def _unreadable(read: SchemaRead, change: Row, consumer: str) -> StreamError:
    return StreamError(
        f"{reader_label(read.stream)}: version {_version(change)} of {read.source} "
        f"{describe_change(change)}, and Delta cannot read the stream's pending changes "
        f"(versions {read.start} to {read.end}) across that change. "
        f"{_fix(read, change, consumer)}"
    )


def unsafe_together(
    stream: str, needs: SchemaRead, replaced: SchemaRead, consumer: str
) -> StreamError:
    assert needs.check_off is not None and replaced.replacing is not None
    return StreamError(
        f"{reader_label(stream)}: reading across version {_version(needs.check_off)} of "
        f"{needs.source}, which {describe_change(needs.check_off)}, needs Delta's schema check "
        f"off, and version {_version(replaced.replacing)} of {replaced.source} "
        f"{describe_change(replaced.replacing)}, which may have replaced its schema; with the "
        f"check off such a change could be read wrongly, so the build reads neither. "
        f"{_fix(replaced, replaced.replacing, consumer)}"
    )


def _peek_refused(read: SchemaRead, consumer: str) -> StreamError:
    assert read.check_off is not None
    if read.started:
        return StreamError(
            f"{reader_label(read.stream)}: its changes from its start point (versions "
            f"{read.start} to {read.end} of {read.source}) cross version "
            f"{_version(read.check_off)}, which {describe_change(read.check_off)}. Delta "
            "reads changes across that only in a consumer's build, so a peek cannot read "
            "them. Start it at or after that version, "
            f"e.g. at={{'version': {_version(read.check_off)}}}."
        )
    return StreamError(
        f"{reader_label(read.stream)}: its pending changes (versions {read.start} to "
        f"{read.end} of {read.source}) cross version {_version(read.check_off)}, which "
        f"{describe_change(read.check_off)}. Delta reads changes across that only with a "
        "setting the consumer's build applies to its own write, so a peek cannot read them. "
        f"Build the consumer first: dbt run -s {model_name(consumer)}"
    )
