"""The offsets of insert-only streams: for each, the set of files it has consumed.

A set does not fit in a commit's userMetadata, so sets live in the Delta table
`dbt_streams_files` of the registry's schema, one row per file (path, size, modification
time: a file rewritten in place is another file) plus a header row (empty path) that makes an
empty part exist. Every build that consumes writes a NEW part under a fresh id, before its
target's write, and its stream's record names the set that part completes. The record travels
in the target's commit like every offset (offsets/commit.py), so a part counts only once the
commit that names it has landed: a failed or crashed build leaves a part nobody names, and the
next build starts again from the last committed set. Correctness never depends on the two
tables committing together.

A set is a chain of parts, its id their ids joined by PART_SEPARATOR: a first part written
from a listing of the folder (`write_sql`: the listed files that were in the old set, plus
those the build consumes or records unread, so files removed from the folder drop out), then
one part per build holding only the files that build consumed, named (`extend_sql`). A build
so writes the few rows of its new files, not the whole folder's again. A first set, a build of
many files and every CLEANUP_EVERY-th set start a new chain from a listing. An id without a
separator (every set written before chains) is a chain of one part.
"""

import uuid
from dataclasses import dataclass

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.files.table import FileTable, read_listing
from dbt.adapters.spark_streams.streams.offsets.registry import Registry
from dbt.adapters.spark_streams.streams.sql.quoting import string_literal
from dbt.adapters.spark_streams.streams.sql.run import RunSql

FILE_SETS = "dbt_streams_files"
FILE_SET_COLUMNS = (
    "stream string, set_id string, location string, path string, size bigint, "
    "modified timestamp, consumed_now boolean, recorded_at timestamp"
)
HEADER = "''"
PART_SEPARATOR = "+"
# Older sets of a stream are deleted every CLEANUP_EVERY-th set, once they are this much older
# than the stream's committed set (a margin for clocks that disagree).
CLEANUP_EVERY = 16
CLEANUP_MARGIN_MS = 3_600_000


@dataclass(frozen=True)
class FileEntry:
    """One file as listed: a path, a size and a modification time (epoch milliseconds)."""

    path: str
    size: int
    modified_ms: int

    def literal(self) -> str:
        """The file as a SQL tuple, comparable with (path, size, modified) columns."""
        modified = f"timestamp_millis({self.modified_ms}L)"
        return f"({string_literal(self.path)}, {self.size}L, {modified})"


@dataclass(frozen=True)
class FileSet:
    """A stored set: where its files were listed, and when its first part was written."""

    set_id: str
    location: str
    recorded_ms: int

    @property
    def parts(self) -> int:
        return len(set_parts(self.set_id))


def new_set_id() -> str:
    return uuid.uuid4().hex


def set_parts(set_id: str) -> list[str]:
    """The ids of a set's parts, first part first."""
    return set_id.split(PART_SEPARATOR)


def chained(set_id: str, part: str) -> str:
    """The id of set `set_id` continued by `part`."""
    return f"{set_id}{PART_SEPARATOR}{part}"


class FileSets:
    """The table of file sets in one schema."""

    def __init__(self, run: RunSql, table: str) -> None:
        self.run = run
        self.table = table

    @classmethod
    def of(cls, registry: Registry) -> "FileSets":
        """The file sets beside the registry, created on first use."""
        return cls(registry.run, registry.ensure_table(FILE_SETS, FILE_SET_COLUMNS))

    def header(self, stream: str, set_id: str) -> FileSet | None:
        """The stored set `set_id` of `stream`, or None if it (or one of its parts) is
        missing."""
        rows = self.run(f"select {_HEADERS} from {self._rows(stream, set_id)} and path = {HEADER}")
        row = rows[0] if rows else {"location": None, "parts": 0, "recorded_ms": None}
        return _found(set_id, row["location"], row["parts"], row["recorded_ms"])

    def files_of(self, stream: str, set_id: str | None) -> str:
        """The (path, size, modified) rows of a set; none for no set."""
        if set_id is None:
            return "select '' as path, 0L as size, cast(null as timestamp) as modified where false"
        rows = self._rows(stream, set_id)
        return f"select path, size, modified from {rows} and path <> {HEADER}"

    def consumed_now(self, stream: str, set_id: str) -> str:
        """The (path, size, modified) rows a set's build consumed."""
        return f"select path, size, modified from {self._rows(stream, set_id)} and consumed_now"

    def pending(
        self, table: FileTable, stream: str, old: str | None, candidate: str, limit: int
    ) -> tuple[list[FileEntry], FileSet | None]:
        """Up to `limit` listed files not in the set `old` for which `candidate` holds, and
        the stored headers of `old` (None if it or a part of it is missing), in one query that
        reads the set once: the listed files and the set's rows grouped by file, a file new
        when it is listed and not stored, the headers' group summed up as `_HEADERS` does."""
        listed = (
            f"select l.path, l.size, l.modified, true as listed, cast(null as string) as "
            f"location, cast(null as timestamp) as recorded_at from ({table.listing_sql()}) l "
            f"where {candidate}"
        )
        stored = (
            f"select path, size, modified, false, location, recorded_at from "
            f"{self._rows(stream, old or '')}"
        )
        header = f"path = {HEADER}"
        query = (
            f"select if({header}, 'set', 'file') as kind, if({header}, min(location), path) "
            f"as path, if({header}, count(*), size) as size, unix_millis(if({header}, "
            f"min(recorded_at), modified)) as ms from ({listed} union all {stored}) "
            f"group by path, size, modified having {header} or bool_and(listed) "
            f"order by not ({header}), modified, path limit {limit + 1}"
        )
        rows = read_listing(self.run, table, stream, query)
        entries = [
            FileEntry(str(r["path"]), int(r["size"]), int(r["ms"]))
            for r in rows
            if r["kind"] == "file"
        ]
        headers = [r for r in rows if r["kind"] == "set"]
        found = headers[0] if headers else {"path": None, "size": 0, "ms": None}
        return entries[:limit], _found(old or "", found["path"], found["size"], found["ms"])

    def write_sql(
        self,
        table: FileTable,
        stream: str,
        old: str | None,
        new: str,
        consume: str,
        skip: str = "false",
    ) -> str:
        """The statement writing set `new`: the listed files of set `old`, plus the files this
        build consumes (`consume`, marked consumed_now) or records unread (`skip`)."""
        return self._insert_set(
            table, stream, new,
            f"select l.path, l.size, l.modified, o.path is null and ({consume}) from "
            f"({table.listing_sql()}) l left join ({self.files_of(stream, old)}) o on "
            f"{_same_file('l', 'o')} where o.path is not null or ({consume}) or ({skip})",
        )  # fmt: skip

    def extend_sql(
        self, table: FileTable, stream: str, part: str, consumed: list[FileEntry]
    ) -> str:
        """The statement writing the part `part` of the `consumed` files, which continues a
        set without listing the folder again (files removed since stay in the set until a
        listed write)."""
        named = ", ".join(f"({entry.literal()[1:-1]}, true)" for entry in consumed)
        return self._insert_set(
            table, stream, part,
            f"select * from values {named} as _new(path, size, modified, consumed_now)",
        )  # fmt: skip

    def _insert_set(self, table: FileTable, stream: str, new: str, files: str) -> str:
        """The statement writing set `new`: its header row and `files` (path, size, modified,
        consumed_now), all recorded now."""
        values = (
            f"{string_literal(stream)}, {string_literal(new)}, {string_literal(table.location)}"
        )
        return (
            f"insert into {self.table} select {values}, path, size, modified, consumed_now, "
            f"now() from (select {HEADER} as path, 0L as size, cast(null as timestamp) as "
            f"modified, false as consumed_now union all {files})"
        )

    def _rows(self, stream: str, set_id: str) -> str:
        """The table, filtered to one set's rows, all its parts' (a WHERE clause to extend
        with `and`)."""
        parts = ", ".join(string_literal(part) for part in set_parts(set_id))
        return f"{self.table} where stream = {string_literal(stream)} and set_id in ({parts})"

    def cleanup_sql(self, stream: str, committed: FileSet) -> str:
        """Delete the stream's parts written well before its committed set's first part: no
        build can commit them any more (a build writes its part after the commit it starts
        from). The committed set's own parts stay whatever their clocks said, since the
        build that deletes may still fail and leave that set the one to start from."""
        before = committed.recorded_ms - cleanup_margin_ms()
        parts = ", ".join(string_literal(part) for part in set_parts(committed.set_id))
        return (
            f"delete from {self.table} where stream = {string_literal(stream)} "
            f"and recorded_at < timestamp_millis({before}L) and set_id not in ({parts})"
        )

    def drop_sql(self, stream: str) -> str:
        return f"delete from {self.table} where stream = {string_literal(stream)}"

    def committed(self, stream: str, set_id: str) -> FileSet:
        """The set a committed offset names, read now; an error if it is missing."""
        return self.required(stream, set_id, self.header(stream, set_id))

    def required(self, stream: str, set_id: str, found: FileSet | None) -> FileSet:
        """The set a committed offset names, as its headers were `found`; an error if it (or a
        part of it) is missing."""
        if found is None:
            raise StreamError(
                f"Stream {stream}: the set of files it consumed ({set_id}) is missing from "
                f"{self.table}, so the files it has not consumed cannot be told apart. Rebuild "
                "the consumer with --full-refresh to start the stream over."
            )
        return found


# A set's headers, one row: where its parts were listed, how many of them are stored, and when
# its first part was written.
_HEADERS = (
    "min(location) as location, count(*) as parts, unix_millis(min(recorded_at)) as recorded_ms"
)


def _found(set_id: str, location: object, parts: object, recorded_ms: object) -> FileSet | None:
    """The set `set_id` whose headers were read, or None when a part of it is missing."""
    if location is None or int(str(parts)) != len(set_parts(set_id)):
        return None
    return FileSet(set_id, str(location), int(str(recorded_ms)))


def cleanup_margin_ms() -> int:
    """Read at each use, so a test can shorten it."""
    return CLEANUP_MARGIN_MS


def _same_file(left: str, right: str) -> str:
    return (
        f"{left}.path = {right}.path and {left}.size = {right}.size "
        f"and {left}.modified = {right}.modified"
    )
