"""The file sets of insert-only streams (no JVM): a set's headers read back (every part of a
chained set), the one listing query's files and headers told apart, and the statements that
write a set's parts."""

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.files.sets import (
    FileEntry,
    FileSet,
    FileSets,
    chained,
    set_parts,
)
from dbt.adapters.spark_streams.streams.files.table import FileTable

TABLE = FileTable("`landing`.`events`", "parquet", "file:/landing/events", ("id",), ("int",), None)
SETS = "`analytics`.`dbt_streams_files`"


class Recorder:
    def __init__(self, answer: list[dict]) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def __call__(self, sql: str) -> list[dict]:
        self.asked.append(sql)
        return self.answer


def headers(location: str | None, parts: int, recorded_ms: int | None) -> list[dict]:
    return [{"location": location, "parts": parts, "recorded_ms": recorded_ms}]


def test_a_sets_headers_are_read_back() -> None:
    run = Recorder(headers("file:/landing/events", 1, 1700))
    assert FileSets(run, SETS).header("s", "set-1") == FileSet(
        "set-1", "file:/landing/events", 1700
    )
    assert run.asked == [
        "select min(location) as location, count(*) as parts, unix_millis(min(recorded_at)) "
        f"as recorded_ms from {SETS} where stream = 's' and set_id in ('set-1') and path = ''"
    ]
    assert FileSets(Recorder(headers(None, 0, None)), SETS).header("s", "set-1") is None


def test_a_chained_set_is_found_only_with_all_its_parts() -> None:
    chain = chained(chained("first", "second"), "third")
    assert set_parts(chain) == ["first", "second", "third"]
    run = Recorder(headers("file:/landing/events", 3, 1700))
    found = FileSets(run, SETS).header("s", chain)
    assert found == FileSet(chain, "file:/landing/events", 1700) and found.parts == 3
    assert "and set_id in ('first', 'second', 'third') and path = ''" in run.asked[0]
    missing_one = Recorder(headers("file:/landing/events", 2, 1700))
    assert FileSets(missing_one, SETS).header("s", chain) is None
    assert "set_id in ('first', 'second', 'third') and path <> ''" in FileSets(run, SETS).files_of(
        "s", chain
    )


def test_the_listing_query_returns_new_files_and_the_old_sets_headers() -> None:
    run = Recorder([
        {"kind": "set", "path": "file:/landing/events", "size": 1, "ms": 1700},
        {"kind": "file", "path": "file:/landing/events/a.parquet", "size": 10, "ms": 5},
        {"kind": "file", "path": "file:/landing/events/b.parquet", "size": 11, "ms": 6},
    ])  # fmt: skip
    files, header = FileSets(run, SETS).pending(TABLE, "s", "set-1", "true", 501)
    assert files == [
        FileEntry("file:/landing/events/a.parquet", 10, 5),
        FileEntry("file:/landing/events/b.parquet", 11, 6),
    ]
    assert header == FileSet("set-1", "file:/landing/events", 1700)
    [query] = run.asked
    assert query == (
        "select if(path = '', 'set', 'file') as kind, if(path = '', min(location), path) as "
        "path, if(path = '', count(*), size) as size, unix_millis(if(path = '', "
        "min(recorded_at), modified)) as ms from (select l.path, l.size, l.modified, true as "
        "listed, cast(null as string) as location, cast(null as timestamp) as recorded_at from "
        f"(select path, size, modified from {TABLE.listing_view}) l where true union all "
        "select path, size, modified, false, location, recorded_at from "
        f"{SETS} where stream = 's' and set_id in ('set-1')) group by path, size, modified "
        "having path = '' or bool_and(listed) order by not (path = ''), modified, path limit 502"
    )  # the set is read once: its files and headers grouped with the listed files


def test_the_listing_query_keeps_the_limit_without_headers() -> None:
    run = Recorder([
        {"kind": "file", "path": f"file:/landing/events/{n}.parquet", "size": 10, "ms": n}
        for n in range(3)
    ])  # fmt: skip
    files, header = FileSets(run, SETS).pending(TABLE, "s", "set-1", "true", 2)
    assert [entry.modified_ms for entry in files] == [0, 1] and header is None


def test_a_part_holds_the_files_named_only() -> None:
    entry = FileEntry("file:/landing/events/it's.parquet", 10, 5)
    sql = FileSets(Recorder([]), SETS).extend_sql(TABLE, "s", "part", [entry])
    assert sql == (
        f"insert into {SETS} select 's', 'part', 'file:/landing/events', path, size, modified, "
        "consumed_now, now() from (select '' as path, 0L as size, cast(null as timestamp) as "
        "modified, false as consumed_now union all select * from values "
        "('file:/landing/events/it\\'s.parquet', 10L, timestamp_millis(5L), true) as "
        "_new(path, size, modified, consumed_now))"
    )


def test_a_listed_set_keeps_the_old_sets_files_that_are_still_there() -> None:
    sql = FileSets(Recorder([]), SETS).write_sql(TABLE, "s", "old", "new", "l.size > 0", "false")
    assert (
        "select l.path, l.size, l.modified, o.path is null and (l.size > 0) from (select path, "
        f"size, modified from {TABLE.listing_view}) l left join (select path, size, modified "
        f"from {SETS} where stream = 's' and set_id in ('old') and path <> '') o on "
    ) in sql
    assert sql.endswith("where o.path is not null or (l.size > 0) or (false))")
    first = FileSets(Recorder([]), SETS).write_sql(TABLE, "s", None, "new", "true")
    assert "cast(null as timestamp) as modified where false) o on" in first


def test_sets_are_dropped_per_stream() -> None:
    assert FileSets(Recorder([]), SETS).drop_sql("s") == f"delete from {SETS} where stream = 's'"


def test_a_listing_of_a_gone_folder_names_the_stream_and_the_location() -> None:
    def gone(sql: str) -> list[dict]:
        raise RuntimeError("[PATH_NOT_FOUND] Path does not exist: file:/landing/events")

    with pytest.raises(StreamError) as raised:
        FileSets(gone, SETS).pending(TABLE, "events_log__events", "set-1", "true", 501)
    assert raised.value.msg.startswith(
        "Stream events_log__events: the location file:/landing/events of source "
        "`landing`.`events` no longer exists"
    )


def test_without_an_old_set_no_header_is_found() -> None:
    run = Recorder([])
    _, header = FileSets(run, SETS).pending(TABLE, "s", None, "true", 501)
    assert header is None
    assert f"from {SETS} where stream = 's' and set_id in (''))" in run.asked[0]
