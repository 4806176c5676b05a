"""Statements that read a build's change set beside its write.

Delta refuses a Change Data Feed range across a widened, renamed or dropped column unless its
schema check is off; the build turns it off for its write where that is safe
(delta/schema_changes.py). Some builds read the change set in other statements before the
write: an apply_cdc build checks the events and appends the tombstones and the kept events, a
MERGE names the change's key ranges. Each such statement runs with the same confs as the write,
and, where Delta refused the range for a MERGE or write that evolved the source's schema (which
the history does not show), once more with the check off, as the write does. A refused
statement committed nothing, so running it again is safe.
"""

from typing import Any

from dbt.adapters.spark_streams.streams.errors import SparkUnreachable, StreamError
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql, RunWithConfs


def read_changes(
    run: RunSql, run_with_confs: RunWithConfs, build: Any, sql: str, confs: dict | None = None
) -> list[Row]:
    """`sql`, a statement reading `build`'s change set (None: no build), with `confs` and the
    build's schema confs."""
    confs = dict(confs or {})
    if build is None:
        return _run(run, run_with_confs, sql, confs)
    reads = build.schema_reads
    try:
        return _run(run, run_with_confs, sql, {**confs, **reads.confs})
    except (SparkUnreachable, StreamError):
        raise
    except Exception as exc:
        if not reads.read_across_evolution(run, str(exc), build.consumer):
            raise
    return _run(run, run_with_confs, sql, {**confs, **reads.confs})


def _run(run: RunSql, run_with_confs: RunWithConfs, sql: str, confs: dict) -> list[Row]:
    return run_with_confs(sql, confs) if confs else run(sql)
