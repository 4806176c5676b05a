"""What a stream needs from its source, as one interface: a kind of source is one class.

A Delta table (delta_table.py) is the first kind. Another kind (a view, a folder of files)
implements the same methods; resolve.py, which handles what every stream shares (consumers,
keys, pins, offsets), calls only these.
"""

from typing import Protocol

from dbt.adapters.spark_streams.streams.delta.schema_changes import SchemaReads
from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.records.netting import Snapshot
from dbt.adapters.spark_streams.streams.sql.run import RunSql

SourceWrite = tuple[str, str]
"""A statement a consuming build runs on the source before its write, and what to log."""

# The changes_sql mode of a standard stream read by a history consumer: every version.
VERSIONS = "versions"


class SourceKind(Protocol):
    """One kind of stream source."""

    source_type: str  # recorded with the stream (dbt_streams.source_type)
    modes: tuple[str, ...]  # the stream modes this kind supports
    label: str  # in errors: "mode 'x' is not supported on <label>"

    def describe(self, run: RunSql, schema: str, identifier: str, stream: str) -> SourceTable:
        """The source's columns and properties; an error naming the fix if it cannot be one."""
        ...

    def identify(self, run: RunSql, source: SourceTable) -> SourceTable:
        """The source with the id that tells a recreated source apart (for a new stream)."""
        ...

    def latest(self, run: RunSql, source: SourceTable) -> SourceVersion:
        """The newest state: what a build pins and reads up to."""
        ...

    def history(
        self, run: RunSql, source: SourceTable, offset: StreamRecord, pin: SourceVersion | None
    ) -> CommitsSinceOffset:
        """What was committed since the stream's offset (up to `pin` when given)."""
        ...

    def check_same(
        self,
        run: RunSql,
        stream: str,
        offset: StreamRecord,
        source: SourceTable,
        history: CommitsSinceOffset,
    ) -> SourceTable:
        """The source, if it is still the one the offset was taken from; else an error."""
        ...

    def check_readable(
        self,
        run: RunSql,
        reads: SchemaReads,
        stream: str,
        source: SourceTable,
        offset: StreamRecord,
        history: CommitsSinceOffset,
        consuming: bool,
    ) -> list[str]:
        """An error if the changes since the offset cannot be read (stale, schema changes a
        read cannot cross); else warnings (changes about to leave retention)."""
        ...

    def prepare(
        self,
        stream: str,
        source: SourceTable,
        creating: bool,
        consuming: bool,
        auto_enable: bool,
        extension_days: int,
    ) -> tuple[SourceTable, list[SourceWrite]]:
        """The source writes a consuming build needs before its streams can be read."""
        ...

    def first_version(self, run: RunSql, source: SourceTable, point: dict, at: bool) -> int:
        """The first version a new stream reads from `at` / `before` `point`."""
        ...

    def changes_sql(self, mode: str, snapshot: Snapshot, first: int) -> str:
        """The stream's rows for the changes from `first` to the snapshot's version (`mode`
        VERSIONS: every version, not netted, for a history consumer)."""
        ...

    def initial_rows_sql(self, snapshot: Snapshot) -> str:
        """Every row of the snapshot, as INSERTs (a new stream with show_initial_rows)."""
        ...

    def empty_sql(self, snapshot: Snapshot) -> str:
        """The stream's columns and no rows."""
        ...
