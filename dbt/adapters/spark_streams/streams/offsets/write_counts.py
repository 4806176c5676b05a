"""What a build wrote, from the write's own Delta metrics: no extra Spark job counts rows.

A MERGE answers with one row of counts; an INSERT or CREATE TABLE AS answers nothing, and its
counts are in the operation metrics of its commit, which the build reads from the target's
history anyway to confirm the commit landed.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# DESCRIBE HISTORY's operationMetrics keys, per kind of count.
INSERTED_METRICS = ("numTargetRowsInserted", "numOutputRows")
UPDATED_METRICS = ("numTargetRowsUpdated", "numUpdatedRows")
DELETED_METRICS = ("numTargetRowsDeleted", "numDeletedRows")


@dataclass(frozen=True)
class WriteCounts:
    """Rows the write inserted into, updated in and deleted from the target."""

    inserted: int = 0
    updated: int = 0
    deleted: int = 0

    @classmethod
    def from_merge_row(cls, row: Mapping[str, Any]) -> "WriteCounts":
        """The counts a MERGE statement returns as its result row."""
        return cls(
            int(row.get("num_inserted_rows") or 0),
            int(row.get("num_updated_rows") or 0),
            int(row.get("num_deleted_rows") or 0),
        )

    @classmethod
    def from_operation_metrics(cls, metrics: Mapping[str, Any] | None) -> "WriteCounts":
        """The counts of a commit's operationMetrics (DESCRIBE HISTORY)."""
        metrics = metrics or {}
        return cls(
            _first(metrics, INSERTED_METRICS),
            _first(metrics, UPDATED_METRICS),
            _first(metrics, DELETED_METRICS),
        )

    def summary(self) -> str:
        """`3 inserted, 1 updated, 1 deleted`, as the build's result line says it."""
        return f"{self.inserted} inserted, {self.updated} updated, {self.deleted} deleted"


def _first(metrics: Mapping[str, Any], keys: tuple[str, ...]) -> int:
    """The first of `keys` the metrics hold, as a number (0 when none)."""
    for key in keys:
        if metrics.get(key) is not None:
            return int(metrics[key])
    return 0
