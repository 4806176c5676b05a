"""The one interface every kind of stream source implements (Delta table, view, file table).

The adapter never asks which kind a source is: `choose.py` picks the kind of each source, once,
in one place, and the adapter calls the kind's `stream`, `changes`, `status` and `dropped`.
What every kind shares (consumers, keys, pins, offsets and the commit protocol) stays outside
the kinds: a kind only says how its sources are read.
"""

from typing import Any, Protocol

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import RunSql
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest, StreamLookup


class StreamKind(Protocol):
    """One kind of stream source."""

    source_type: str  # recorded with each stream (dbt_streams.source_type)

    def claims(self, source: CatalogEntry, mode: str | None) -> bool:
        """Whether this kind reads `source` for a stream of `mode` (None: a changes() call).
        The kinds are asked in the order choose.py registers them."""
        ...

    def stream(
        self,
        run: RunSql,
        registry: Registry,
        build: StreamBuild,
        request: StreamRequest,
        source: CatalogEntry,
    ) -> str:
        """stream(): the SQL of the stream's changes since its offset; records in `build` the
        offset a consuming build moves to and the source writes it needs."""
        ...

    def changes(
        self,
        run: RunSql,
        pins: dict[str, SourceVersion],
        find_stream: StreamLookup,
        request: ChangesRequest,
        source: CatalogEntry,
    ) -> str:
        """changes(): the SQL of the source's change records between the request's points."""
        ...

    def status(self, run: RunSql, registry: Registry, record: StreamRecord) -> dict[str, Any]:
        """`stale`, `stale_after` and `stale_reason` of one of this kind's streams, now."""
        ...

    def dropped(self, run: RunSql, registry: Registry, record: StreamRecord) -> None:
        """Remove what a dropped stream kept besides its registry rows (nothing, for most)."""
        ...
