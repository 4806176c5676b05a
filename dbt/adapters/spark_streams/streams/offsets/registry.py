"""The registry: every stream, its source, consumer and offset, as the view `dbt_streams`.

It is a convenience copy. The offsets that count travel in the consumer target's own commit
(see commit.py); the registry is rolled forward from there when a crash left it behind.

Each offset move appends one row to the Delta table `dbt_streams_log`, and the view shows the
newest row per stream (transaction versions only grow per stream). An append is one small
write, where an upsert (MERGE) costs several Spark jobs after every build. The log doubles as
the history of every stream's offsets. Every COMPACT_EVERY-th transaction of a stream checks
the log's file count and compacts it once it holds many small files; Delta's auto compaction
would rewrite it after every append, and a check on every build would cost as much again.

Builds queue their streams' new state and the registry appends it once per dbt invocation
(`flush`, when dbt closes its connections): a run of many stream models makes one small
commit, not one per model. Reads in the same run see what is queued.

The append skips Delta's checksum file (`NO_CHECKSUM`): on an object store writing it is a
temporary object, its rename and their existence probes, 22 requests of the append's 35, for a
file that only spares a reader of the log one replay. Readers of the registry do without it.
"""

import json
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from datetime import datetime

from dbt.adapters.spark_streams.streams.sql.quoting import quote_path, string_literal
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql, RunWithConfs

REGISTRY_TABLE = "dbt_streams"
REGISTRY_LOG = "dbt_streams_log"

REGISTRY_COLUMNS = """
  name string not null, schema string, source_table string, source_id string,
  source_type string, mode string, unique_key string, consumer string, target_table string,
  offset_version bigint, offset_timestamp timestamp, txn_version bigint,
  created_on timestamp, last_consumed_on timestamp"""
# A stream's newest log row: transaction versions only grow per stream.
NEWEST_FIRST = "txn_version desc, recorded_at desc"
COMPACT_AT_FILES = 64
COMPACT_EVERY = 16
ENSURE_ATTEMPTS = 4
NO_CHECKSUM = {"spark.databricks.delta.writeChecksumFile.enabled": "false"}


@dataclass(frozen=True)
class StreamRecord:
    """One stream as the registry stores it."""

    name: str
    schema: str
    source_table: str
    source_id: str
    source_type: str
    mode: str
    unique_key: tuple[str, ...]
    consumer: str
    target_table: str
    offset_version: int
    offset_timestamp: datetime
    txn_version: int
    created_on: datetime
    last_consumed_on: datetime | None

    @classmethod
    def from_row(cls, row: Row) -> "StreamRecord":
        values = {field.name: row[field.name] for field in fields(cls)}
        values["unique_key"] = tuple(json.loads(row["unique_key"] or "[]"))
        return cls(**values)

    def sql_literals(self) -> str:
        """The record's values as SQL literals, in column order."""
        return ", ".join(_literal(getattr(self, f.name)) for f in fields(self))


def _literal(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, datetime):
        return f"timestamp{string_literal(value.strftime('%Y-%m-%d %H:%M:%S.%f'))}"
    if isinstance(value, tuple):
        return string_literal(json.dumps(list(value)))
    if isinstance(value, int):
        return str(value)
    return string_literal(str(value))


class Registry:
    """Reads and appends to the registry in one schema."""

    def __init__(self, run: RunSql, schema: str, compact_at_files: int = COMPACT_AT_FILES) -> None:
        self.run = run
        self.schema = schema
        self.compact_at_files = compact_at_files
        self.latest_view = quote_path(schema, REGISTRY_TABLE)
        self.log = quote_path(schema, REGISTRY_LOG)
        self._ensured: set[str] = set()
        self._ensure_lock = threading.Lock()
        self._lock = threading.Lock()
        self._new: dict[str, StreamRecord] = {}
        self._maybe_behind: dict[str, StreamRecord] = {}

    def ensure(self) -> None:
        """Create the log and its view on first use, once per process."""
        self._create_once(REGISTRY_LOG, self._create_objects)

    def ensure_table(self, name: str, columns: str) -> str:
        """Create another Delta table of the registry's schema on first use, once per process
        (the file sets of insert-only streams); returns its quoted name."""
        table = quote_path(self.schema, name)
        self._create_once(
            name, lambda: self.run(f"create table if not exists {table} ({columns}) using delta")
        )
        return table

    def _create_once(self, name: str, create: Callable[[], object]) -> None:
        """Threads wait for one another here. Other processes may create the same objects at
        the same moment: the loser's CREATE ... IF NOT EXISTS can still fail (the metastore or
        Delta saw the other one commit first), and a retry then finds them in place."""
        with self._ensure_lock:
            if name in self._ensured:
                return
            for attempt in range(1, ENSURE_ATTEMPTS + 1):
                try:
                    create()
                    break
                except Exception:
                    if attempt == ENSURE_ATTEMPTS:
                        raise
                    time.sleep(attempt * random.uniform(0.5, 1.5))
            self._ensured.add(name)

    def _create_objects(self) -> None:
        self.run(f"create schema if not exists {quote_path(self.schema)}")
        self.run(
            f"create table if not exists {self.log} ({REGISTRY_COLUMNS}, recorded_at timestamp) "
            "using delta"
        )
        if not self._listed("views"):
            self._create_view()

    def compact(self) -> None:
        """OPTIMIZE the log when its appends have piled up into many small files."""
        self.ensure()
        [detail] = self.run(f"describe detail {self.log}")
        if int(detail.get("numFiles") or 0) >= self.compact_at_files:
            self.run(f"optimize {self.log}")

    def _listed(self, kind: str) -> bool:
        """Whether the schema lists a table (or view) named dbt_streams."""
        pattern = string_literal(REGISTRY_TABLE)
        return bool(self.run(f"show {kind} in {quote_path(self.schema)} like {pattern}"))

    def _create_view(self) -> None:
        """The view of the newest row per stream; a registry kept as a table by versions
        before the log moves its rows into the log first."""
        if self._listed("tables"):
            self.run(f"insert into {self.log} select *, now() from {self.latest_view}")
            self.run(f"drop table {self.latest_view}")
        names = ", ".join(f.name for f in fields(StreamRecord))
        self.run(
            f"create view if not exists {self.latest_view} as select {names} from (select *, "
            f"row_number() over (partition by name order by {NEWEST_FIRST}) "
            f"as newest from {self.log}) where newest = 1"
        )

    def get(self, name: str) -> StreamRecord | None:
        """The stream called `name` (its queued state first), or None if it was never created."""
        with self._lock:
            queued = self._new.get(name)
        if queued is not None:
            return queued
        self.ensure()
        found = self.run(
            f"select * from {self.log} where name = {string_literal(name)} "
            f"order by {NEWEST_FIRST} limit 1"
        )
        return StreamRecord.from_row(found[0]) if found else None

    def queue(self, records: Iterable[StreamRecord]) -> None:
        """Hold streams' new state, just committed with their consumer, for the next flush."""
        with self._lock:
            _keep_newest(self._new, records)

    def queue_if_behind(self, records: Iterable[StreamRecord]) -> None:
        """Hold committed state the registry may lack (a crash after the commit); the flush
        appends it only where the log is behind."""
        with self._lock:
            _keep_newest(self._maybe_behind, records)

    def has_queued(self) -> bool:
        with self._lock:
            return bool(self._new or self._maybe_behind)

    def flush(
        self, with_confs: RunWithConfs | None = None
    ) -> tuple[list[StreamRecord], list[StreamRecord]]:
        """Append what is queued, in one commit (through `with_confs`, without a checksum
        file, where given): returns the new records and the rolled-forward ones. On failure
        the queue is kept for a retry; the offsets that count are in the consumers' targets
        anyway."""
        with self._lock:
            new, maybe_behind = dict(self._new), dict(self._maybe_behind)
        candidates = [
            record
            for name, record in maybe_behind.items()
            if name not in new or new[name].txn_version < record.txn_version
        ]
        behind = self._behind(candidates)
        self._insert([*new.values(), *behind], with_confs)
        with self._lock:
            _drop_flushed(self._new, new)
            _drop_flushed(self._maybe_behind, maybe_behind)
        self._compact_if_due([*new.values(), *behind])
        return list(new.values()), behind

    def _behind(self, records: list[StreamRecord]) -> list[StreamRecord]:
        """The records newer than the log's newest row for their stream, in one read."""
        if not records:
            return []
        self.ensure()
        names = ", ".join(string_literal(record.name) for record in records)
        stored = self.run(
            f"select name, max(txn_version) as txn_version from {self.log} "
            f"where name in ({names}) group by name"
        )
        newest = {row["name"]: row["txn_version"] for row in stored}
        return [r for r in records if (newest.get(r.name) or -1) < r.txn_version]

    def drop(self, name: str) -> None:
        """Forget the stream: every log row of it goes, in one commit."""
        with self._lock:
            self._new.pop(name, None)
            self._maybe_behind.pop(name, None)
        self.ensure()
        self.run(f"delete from {self.log} where name = {string_literal(name)}")

    def all(self) -> list[StreamRecord]:
        """Every stream: its newest logged row, or the committed state queued for the flush
        (a build's new offsets, or a roll-forward) where that is newer. The flush runs when
        dbt closes its connections, after the on-run-end hooks, and a hook's show_streams
        must see the run's offsets."""
        self.ensure()
        rows = self.run(f"select * from {self.latest_view}")
        streams = {record.name: record for record in map(StreamRecord.from_row, rows)}
        with self._lock:
            queued = [*self._maybe_behind.values(), *self._new.values()]
        _keep_newest(streams, queued)
        return list(streams.values())

    def append(self, records: list[StreamRecord]) -> None:
        """Record the streams' new state, all in one commit."""
        self._insert(records)
        self._compact_if_due(records)

    def _insert(self, records: list[StreamRecord], with_confs: RunWithConfs | None = None) -> None:
        if not records:
            return
        self.ensure()
        values = ", ".join(f"({record.sql_literals()}, now())" for record in records)
        statement = f"insert into {self.log} values {values}"
        if with_confs is None:
            self.run(statement)
        else:
            with_confs(statement, NO_CHECKSUM)

    def _compact_if_due(self, records: list[StreamRecord]) -> None:
        if any(record.txn_version % COMPACT_EVERY == 0 for record in records):
            self.compact()


def _keep_newest(queue: dict[str, StreamRecord], records: Iterable[StreamRecord]) -> None:
    for record in records:
        current = queue.get(record.name)
        if current is None or current.txn_version <= record.txn_version:
            queue[record.name] = record


def _drop_flushed(queue: dict[str, StreamRecord], flushed: dict[str, StreamRecord]) -> None:
    """Remove what a flush wrote, but not what a build queued for a stream meanwhile."""
    for name, record in flushed.items():
        if queue.get(name) is record:
            del queue[name]
