"""The one place a stream's kind of source is chosen, and where every kind is registered.

A new kind (an Iceberg table, say) is one module implementing StreamKind (kind.py) and one
entry in KINDS. The kinds are asked in order whether they read a source: the file table claims
every insert_only stream, the view every view, and the Delta table the rest (its description
names what is wrong with a source that is no Delta table).
"""

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.delta.source import SourceVersion
from dbt.adapters.spark_streams.streams.kinds.delta_table import DELTA_TABLE
from dbt.adapters.spark_streams.streams.kinds.file_table import FILE_TABLE
from dbt.adapters.spark_streams.streams.kinds.kind import StreamKind
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.kinds.view import VIEW
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import RunSql, described_once
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest, StreamLookup

KINDS: tuple[StreamKind, ...] = (FILE_TABLE, VIEW, DELTA_TABLE)


def kind_of(source: CatalogEntry, mode: str | None) -> StreamKind:
    """The kind that reads `source` for a stream of `mode` (None: a changes() call)."""
    return next(kind for kind in KINDS if kind.claims(source, mode))


def kind_of_record(record: StreamRecord) -> StreamKind:
    """The kind a stream was created on (a record without a known type: a Delta table's, as
    every stream was before there were other kinds)."""
    return next((kind for kind in KINDS if kind.source_type == record.source_type), DELTA_TABLE)


def stream_sql(run: RunSql, registry: Registry, build: StreamBuild, request: StreamRequest) -> str:
    """The SQL of one stream() call, read by its source's kind (each table or view described
    once in it)."""
    with described_once(run) as once:
        source = CatalogEntry(once, request.schema, request.identifier)
        return kind_of(source, request.mode).stream(once, registry, build, request, source)


def changes_sql(
    run: RunSql, pins: dict[str, SourceVersion], find_stream: StreamLookup, request: ChangesRequest
) -> str:
    """The SQL of one changes() call, read by its source's kind (each table or view described
    once in it)."""
    with described_once(run) as once:
        source = CatalogEntry(once, request.schema, request.identifier)
        return kind_of(source, None).changes(once, pins, find_stream, request, source)
