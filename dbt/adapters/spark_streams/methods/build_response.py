"""A stream build's adapter response: dbt prints its message as the model's result line and
writes its fields to run_results.json (`adapter_response`), counts included."""

from dataclasses import dataclass

from dbt.adapters.contracts.connection import AdapterResponse

from dbt.adapters.spark_streams.streams.builds.build import BuildOutcome


@dataclass
class StreamBuildResponse(AdapterResponse):
    """dbt's response with the rows the build's write inserted, updated and deleted."""

    rows_inserted: int | None = None
    rows_updated: int | None = None
    rows_deleted: int | None = None
    build_path: str | None = None  # 'incremental', or 'rebuild' (a view stream's target)

    @classmethod
    def of(cls, outcome: BuildOutcome) -> "StreamBuildResponse":
        """The response for a build's outcome; counts only when it consumed streams."""
        counts = outcome.counts
        if counts is None:
            return cls(_message=outcome.message)
        return cls(
            _message=outcome.message,
            rows_affected=counts.inserted + counts.updated + counts.deleted,
            rows_inserted=counts.inserted,
            rows_updated=counts.updated,
            rows_deleted=counts.deleted,
            build_path=outcome.path,
        )
