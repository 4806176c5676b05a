"""The commit protocol: the target's data and the streams' new offsets land in one commit.

The write statement runs with three session confs set around it and only around it:
`userMetadata` carries the new offsets (readable with DESCRIBE HISTORY), and the Delta
idempotency pair (txnAppId, txnVersion) makes a second write of the same build a no-op. A
crash before the commit leaves old data and old offsets; after it, the registry may lag and is
rolled forward from the target's history on the next build.
"""

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from dbt.adapters.spark_streams.streams.errors import StreamConsumedElsewhere, StreamError
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord
from dbt.adapters.spark_streams.streams.offsets.target_origin import (
    MAX_ORIGINS,
    Origin,
    offsets_missing,
    origin_of,
)
from dbt.adapters.spark_streams.streams.offsets.write_counts import WriteCounts
from dbt.adapters.spark_streams.streams.sql.quoting import quote
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql, RunWithConfs

MARKER = "dbt_spark_streams"
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"
HISTORY_DEPTH = 20
# The target's newest commit alone, then its HISTORY_DEPTH newest (see _recent_history).
SEARCH_DEPTHS = (1, HISTORY_DEPTH)
T = TypeVar("T")


@dataclass(frozen=True)
class BuildCommit:
    """What one consuming build commits: who, which attempt, and the offsets it moves to."""

    consumer: str
    build_id: str
    txn_version: int
    records: tuple[StreamRecord, ...]
    fresh_target: bool = False

    def user_metadata(self) -> str:
        body: dict[str, Any] = {
            "consumer": self.consumer,
            "build_id": self.build_id,
            "txn_version": self.txn_version,
            "streams": [_record_json(record) for record in self.records],
        }
        if self.fresh_target:
            body["fresh_target"] = True
        return json.dumps({MARKER: body}, default=str, sort_keys=True)

    @classmethod
    def from_user_metadata(cls, text: str | None) -> "BuildCommit | None":
        """The commit a history entry describes, or None if it is not a stream build (another
        writer's userMetadata, even one that happens to use the same key)."""
        try:
            body = json.loads(text or "")[MARKER]
            records = tuple(_record_from_json(item) for item in body["streams"])
            fresh = bool(body.get("fresh_target", False))
            return cls(
                body["consumer"], body["build_id"], int(body["txn_version"]), records, fresh
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


def _record_json(record: StreamRecord) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in asdict(record).items()}


def _record_from_json(item: dict[str, Any]) -> StreamRecord:
    values = dict(item)
    for key in ("offset_timestamp", "created_on", "last_consumed_on"):
        values[key] = datetime.fromisoformat(values[key]) if values.get(key) else None
    values["unique_key"] = tuple(values["unique_key"])
    return StreamRecord(**values)


# Delta's errors for a commit that lost to a concurrent one (ConcurrentTransactionException,
# ConcurrentAppendException, ... all carry DELTA_CONCURRENT_ in their error class).
CONFLICT_MARKERS = ("DELTA_CONCURRENT_", "ConcurrentTransactionException", "ConcurrentAppend")
# ... and for one that lost to a concurrent change of the table's metadata or protocol.
METADATA_CONFLICT_MARKERS = ("DELTA_METADATA_CHANGED", "DELTA_PROTOCOL_CHANGED")
CONFLICT_ATTEMPTS = 3


def retry_on_conflict(write: Callable[[], T]) -> T:
    """Run an idempotent write again when it lost to a concurrent commit of the same table."""
    markers = CONFLICT_MARKERS + METADATA_CONFLICT_MARKERS
    for attempt in range(1, CONFLICT_ATTEMPTS):
        try:
            return write()
        except Exception as exc:
            if not any(marker in str(exc) for marker in markers):
                raise
            time.sleep(attempt * 0.5)
    return write()


def app_id(consumer: str) -> str:
    """One idempotency id per consuming model."""
    return f"{MARKER}:{consumer}"


def _set(key: str, value: str) -> str:
    return f"SET {quote(key)}={quote(value)}"


def run_with_confs(run: RunSql, statement: str, confs: dict[str, str]) -> list[Row]:
    """Run one statement with session confs set around it and only around it: a conf left
    set would apply to every later statement of the session, other models' included."""
    try:
        for key, value in confs.items():
            run(_set(key, value))
        return run(statement)
    finally:
        for key in confs:
            run(f"RESET {key}")


def sql_confs(run: RunSql) -> RunWithConfs:
    """`run_with_confs` over SQL SET / RESET statements run by `run`."""
    return partial(run_with_confs, run)


def marker_confs(commit: BuildCommit) -> dict[str, str]:
    """The conf that records the commit in the target's history (DESCRIBE HISTORY)."""
    return {USER_METADATA: commit.user_metadata()}


def run_with_commit(
    run: RunWithConfs, statement: str, commit: BuildCommit, confs: dict[str, str] | None = None
) -> list[Row]:
    """Run the build's one write statement with the offsets attached (plus `confs`).

    A second write with the same (appId, version) pair is silently skipped by Delta, which
    makes a retried build a no-op; a write that lost to a concurrent one is a clear error.
    """
    commit_confs = {
        **marker_confs(commit),
        TXN_APP_ID: app_id(commit.consumer),
        TXN_VERSION: str(commit.txn_version),
    }
    try:
        return run(statement, {**commit_confs, **(confs or {})})
    except Exception as exc:
        if any(marker in str(exc) for marker in CONFLICT_MARKERS):
            raise consumed_elsewhere(commit, str(exc)) from exc
        raise


def _stream_history(run: RunSql, target: str) -> Iterator[tuple[BuildCommit, Row]]:
    """The stream builds among the target's recent commits with their history rows, newest
    first, for a caller that stops at the one it looks for."""
    for row in _recent_history(run, target):
        commit = BuildCommit.from_user_metadata(row.get("userMetadata"))
        if commit is not None:
            yield commit, row


def verify_landed(run: RunSql, target: str, commit: BuildCommit) -> WriteCounts:
    """The counts of the build's commit; fail if the write was skipped because another run
    committed this version first."""
    for landed, row in _stream_history(run, target):
        if landed.build_id == commit.build_id:
            return WriteCounts.from_operation_metrics(row.get("operationMetrics"))
    raise consumed_elsewhere(
        commit,
        f"Delta skipped transaction {commit.txn_version} of {app_id(commit.consumer)} on {target}",
    )


def consumed_elsewhere(commit: BuildCommit, why: str) -> StreamConsumedElsewhere:
    """The error of a build that lost the race for its streams to a concurrent run."""
    names = ", ".join(record.name for record in commit.records)
    return StreamConsumedElsewhere(
        f"Stream {names} is being consumed by another run: this build's write did not land "
        f"({why.strip().splitlines()[0]}). Nothing was consumed by this run; run the model "
        "again to consume what is left."
    )


def latest_commit_for(
    run: RunSql, target: str, consumer: str, follow_copies: bool = True
) -> BuildCommit | None:
    """The stream build of `consumer` whose offsets the target's rows are at: its newest in
    the target's recent history, or, past a CLONE or RESTORE, its newest at or before the
    state that command copied (target_origin.py). None when the recent history holds
    neither: the registry decides. Past a CLONE or RESTORE, the commit's txn version is the
    highest the consumer ever used on the target, so Delta never skips its next write as one
    already applied. A --full-refresh build, which starts its streams over, does not follow
    copies (`follow_copies=False`): it only needs the txn version, and it is the fix the
    errors of a copy whose offsets cannot be told ask for."""
    model = consumer.split(".")[-1]
    table, origin = target, None
    for _ in range(MAX_ORIGINS + 1):
        if origin is None:
            rows: Iterable[Row] = _recent_history(run, table)
        else:
            rows = _history_upto(run, table, origin.version)
        found = _newest_commit_or_origin(rows, table, consumer, model, follow_copies)
        if isinstance(found, BuildCommit):
            if origin is None:
                return found
            highest = max(found.txn_version, _highest_txn(run, target, consumer))
            return replace(found, txn_version=highest)
        if found is None:
            if origin is None:
                return None
            raise offsets_missing(model, target, origin)
        table, origin = found.table, found
    raise StreamError(
        f"Model {model}: its target {target} was cloned or restored more than {MAX_ORIGINS} "
        "times over; rebuild it with --full-refresh."
    )


def _recent_history(run: RunSql, table: str) -> Iterator[Row]:
    """The table's recent commits, newest first, for a caller that stops at the one it looks
    for. The newest commit is read alone first: it is nearly always that one (the consumer's
    last build, or the build's own write), and every commit read costs. Only a caller that
    reads on gets the HISTORY_DEPTH newest (the newest again among them: looking at a commit
    twice changes no answer)."""
    for depth in SEARCH_DEPTHS:
        history = run(f"describe history {table} limit {depth}")
        yield from history
        if len(history) < depth:
            return  # that was the whole history


def _history_upto(run: RunSql, table: str, version: int) -> list[Row]:
    """The table's commits at or before `version`, newest first (its whole history is read:
    this runs once, on the first build after a clone or restore)."""
    return [row for row in run(f"describe history {table}") if int(row["version"]) <= version]


def _newest_commit_or_origin(
    rows: Iterable[Row], table: str, consumer: str, model: str, follow_copies: bool
) -> "BuildCommit | Origin | None":
    """The first of the consumer's stream commits and (when `follow_copies`) CLONE / RESTORE
    commits, newest first."""
    for row in rows:
        commit = BuildCommit.from_user_metadata(row.get("userMetadata"))
        if commit is not None and commit.consumer == consumer:
            return commit
        origin = origin_of(row, table, model) if follow_copies else None
        if origin is not None:
            return origin
    return None


def _highest_txn(run: RunSql, target: str, consumer: str) -> int:
    """The highest txn version of the consumer's stream commits in the target's whole history:
    whether or not a RESTORE takes back Delta's record of the transactions it undid, a version
    above all of them is never skipped as already applied."""
    commits = (
        BuildCommit.from_user_metadata(row.get("userMetadata"))
        for row in run(f"describe history {target}")
    )
    return max(
        (c.txn_version for c in commits if c is not None and c.consumer == consumer), default=0
    )
