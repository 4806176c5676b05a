"""Is a stream's source still the table its offset was taken from?

A dropped and recreated, or replaced, table has a new Delta table id, and its versions mean
nothing to the old offset. Reading the id (DESCRIBE DETAIL) computes the table's whole state,
a Spark job after every commit to the source, so a build first asks the history it reads
anyway: if the offset's own commit is still there with the timestamp recorded with the offset,
and no commit since created or replaced the table, the table is the same one. Only when the
history cannot tell (the commit is gone, its timestamp differs, a replace is pending) does the
build read the id, and the id decides.
"""

from dataclasses import replace

from dbt.adapters.spark_streams.streams.delta.source import SourceTable, source_table_id
from dbt.adapters.spark_streams.streams.delta.staleness import CommitsSinceOffset
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql

# History operations that may give a table new metadata, and with it a new id: then the id
# itself decides (e.g. CREATE OR REPLACE TABLE, REPLACE TABLE AS SELECT, a replacing CLONE).
NEW_TABLE_OPERATIONS = ("CREATE", "REPLACE", "CLONE")


def same_source(
    run: RunSql,
    stream: str,
    existing: StreamRecord,
    source: SourceTable,
    pending: CommitsSinceOffset,
) -> SourceTable:
    """The source with its table id; raise if it is not the table the offset belongs to."""
    identified = with_table_id(run, existing, source, pending)
    if identified.table_id != existing.source_id:
        raise StreamError(
            f"Stream {stream} is stale: its source {source.name} was dropped and "
            f"recreated or replaced (table id {existing.source_id} is now "
            f"{identified.table_id}), so offset {existing.offset_version} (committed "
            f"{existing.offset_timestamp:%Y-%m-%d %H:%M:%S}) means nothing in the new table. "
            "Rebuild with --full-refresh to recreate the stream."
        )
    return identified


def with_table_id(
    run: RunSql, existing: StreamRecord, source: SourceTable, pending: CommitsSinceOffset
) -> SourceTable:
    """The source with its table id: the offset's when the history vouches, else read."""
    if history_shows_same_table(pending):
        return replace(source, table_id=existing.source_id)
    return source_table_id(run, source)


def history_shows_same_table(pending: CommitsSinceOffset) -> bool:
    """The offset's commit, as recorded, and no create or replace after it."""
    offset = pending.offset_commit
    if offset is None or pending.offset_time is None:
        return False
    if offset["timestamp"] != pending.offset_time:
        return False
    return not any(_makes_new_table(row) for row in pending.commits)


def _makes_new_table(row: Row) -> bool:
    operation = str(row.get("operation") or "").upper()
    return any(word in operation for word in NEW_TABLE_OPERATIONS)
