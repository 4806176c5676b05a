"""Insert-only streams on file tables, without Spark, on a fake catalog: which files a build
consumes, when the offset moves, and what is refused (the file set's parts: test_file_sets.py).

The fake catalog answers the build's one listing query (new files and the old set's headers)
from `new_files`, and records every statement; the registry is a dict of records.
"""

from dataclasses import replace

import pytest

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.files import sets as file_sets
from dbt.adapters.spark_streams.streams.files.table import FileTable
from dbt.adapters.spark_streams.streams.kinds.file_table import (
    LITERAL_FILES,
    resolve_file_stream,
)
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.run import Row
from tests.unit.files.test_table import described
from tests.unit.kinds.test_table_stream import CONSUMER, request
from tests.unit.offsets.test_registry import record

LOCATION = "file:/landing/events"
NAME = "events_log__events"
LISTING_VIEW = FileTable("`landing`.`events`", "parquet", LOCATION, (), (), None).listing_view


class Landing:
    """A parquet table over LOCATION whose listing shows `new_files` new files, and whose
    registry log holds `stored`."""

    def __init__(self, new_files: int, stored: StreamRecord | None = None, location=LOCATION):
        self.new_files = new_files
        self.stored = stored
        self.set_location = location
        self.statements: list[str] = []

    def __call__(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("describe table extended"):
            return described("parquet")
        if "bool_and(listed)" in sql:
            files = [
                {"kind": "file", "path": f"{LOCATION}/f{n}.parquet", "size": 10 + n, "ms": n}
                for n in range(self.new_files)
            ]
            return [*files, self.headers()]
        if sql.startswith("select * from `analytics`.`dbt_streams_log` where name"):
            return [_row(self.stored)] if self.stored else []
        if sql.startswith("show views"):
            return [{"viewName": "dbt_streams"}]
        return []

    def headers(self) -> Row:
        """The old set's headers as the listing query sums them up: its location, how many of
        its parts are stored, and when its first was written."""
        if self.stored is None:
            return {"kind": "set", "path": None, "size": 0, "ms": None}
        parts = len(file_sets.set_parts(self.stored.source_id))
        return {"kind": "set", "path": self.set_location, "size": parts, "ms": 0}

    def writes(self) -> list[str]:
        return [s for s in self.statements if s.startswith(("insert into", "delete from"))]


def _row(stored: StreamRecord) -> Row:
    return {**vars(stored), "unique_key": "[]", "recorded_at": stored.created_on}


def stored(
    generation: int = 3, source_type: str = "files", source_id: str = "old-set"
) -> StreamRecord:
    return replace(
        record(NAME, 5, offset=generation),
        source_table="`landing`.`events`",
        source_id=source_id,
        source_type=source_type,
        mode="insert_only",
        unique_key=(),
        consumer=CONSUMER,
    )


def build(
    consumer: str | None = CONSUMER, exists: bool = True, full_refresh: bool = False, **fields
) -> StreamBuild:
    target = "`analytics`.`events_log`"
    return StreamBuild(consumer, "analytics", target, exists, full_refresh, True, **fields)


def resolve(landing: Landing, the_build: StreamBuild, **fields) -> str:
    fields = {"unique_key": (), **fields}
    the_request = request(NAME, schema="landing", identifier="events", mode="insert_only",
                          **fields)  # fmt: skip
    return resolve_file_stream(landing, Registry(landing, "analytics"), the_build, the_request)


def listing(landing: Landing) -> str:
    [query] = [s for s in landing.statements if "bool_and(listed)" in s]
    return query


def test_a_later_build_consumes_the_new_files_by_name_and_extends_its_set() -> None:
    landing = Landing(new_files=2, stored=stored())
    the_build = build()
    sql = resolve(landing, the_build)
    named = (
        "('file:/landing/events/f0.parquet', 10L, timestamp_millis(0L)), "
        "('file:/landing/events/f1.parquet', 11L, timestamp_millis(1L))"
    )
    assert (
        "where (url_decode(replace(_metadata.file_path, '+', '%2B')), _metadata.file_size, "
        in (sql)
    )
    assert f"_metadata.file_modification_time) in ({named})" in sql
    assert "and set_id in ('old-set')" in listing(landing)
    assert the_build.moves and not the_build.only_appends
    [(write, message)] = the_build.source_writes
    [(record_, _)] = the_build.reads.values()
    old, part = record_.source_id.split("+")  # the old set continued by the build's part
    assert old == "old-set" and record_.offset_version == 4 and record_.source_type == "files"
    assert write.startswith(
        f"insert into `analytics`.`dbt_streams_files` select 'events_log__events', '{part}', "
    )
    assert write.endswith(
        "union all select * from values ('file:/landing/events/f0.parquet', 10L, "
        "timestamp_millis(0L), true), ('file:/landing/events/f1.parquet', 11L, "
        "timestamp_millis(1L), true) as _new(path, size, modified, consumed_now))"
    )  # only the two new files: neither the old set's rows nor a listing
    assert message == f"Stream {NAME}: recording its file set (2 new)"


def test_a_chained_set_is_read_and_continued_whole() -> None:
    landing = Landing(new_files=1, stored=stored(source_id="first+second"))
    the_build = build()
    resolve(landing, the_build)
    assert "and set_id in ('first', 'second')" in listing(landing)
    [(record_, _)] = the_build.reads.values()
    assert record_.source_id.startswith("first+second+")


class LandingMissingAPart(Landing):
    """The log names a set of two parts, one of which is gone from dbt_streams_files."""

    def headers(self) -> Row:
        return {"kind": "set", "path": LOCATION, "size": 1, "ms": 0}


def test_a_chained_set_missing_a_part_names_the_fix() -> None:
    landing = LandingMissingAPart(new_files=1, stored=stored(source_id="first+second"))
    assert error(landing).startswith(
        f"Stream {NAME}: the set of files it consumed (first+second) is missing from "
    )


def test_nothing_new_keeps_the_offset_and_writes_nothing() -> None:
    landing = Landing(new_files=0, stored=stored())
    the_build = build()
    sql = resolve(landing, the_build)
    assert "from `landing`.`events` where false)" in sql
    assert not the_build.moves and the_build.source_writes == []
    [(record_, _)] = the_build.reads.values()
    assert (record_.offset_version, record_.source_id) == (3, "old-set")


def test_every_16th_set_lists_the_folder_again_and_cleans_up_old_sets() -> None:
    landing = Landing(new_files=1, stored=stored(generation=file_sets.CLEANUP_EVERY - 1))
    the_build = build()
    resolve(landing, the_build)
    [(write, _), (cleanup, message)] = the_build.source_writes
    assert f"from (select path, size, modified from {LISTING_VIEW}) l left join" in write
    assert cleanup.startswith(
        "delete from `analytics`.`dbt_streams_files` where stream = 'events_log__events' "
        "and recorded_at < timestamp_millis("
    )
    assert message == f"Stream {NAME}: old file sets"


def test_more_files_than_a_read_can_name_are_read_through_the_new_set() -> None:
    landing = Landing(new_files=LITERAL_FILES + 1, stored=stored())
    the_build = build()
    sql = resolve(landing, the_build)
    assert f"limit {LITERAL_FILES + 2}" in listing(landing)  # the headers, and one file too many
    new_id = next(iter(the_build.reads.values()))[0].source_id
    assert (
        "_metadata.file_modification_time) in (select path, size, modified from "
        f"`analytics`.`dbt_streams_files` where stream = '{NAME}' and set_id in ('{new_id}') "
        "and consumed_now)"
    ) in sql
    [(_, message)] = the_build.source_writes
    assert message == f"Stream {NAME}: recording its file set ({LITERAL_FILES + 1} new)"


def test_a_peek_of_many_files_reads_what_is_not_in_the_set_and_writes_nothing() -> None:
    landing = Landing(new_files=LITERAL_FILES + 1, stored=stored())
    the_build = build(consumer=None)
    sql = resolve(landing, the_build)
    assert (
        "_metadata.file_modification_time) not in (select path, size, modified from "
        f"`analytics`.`dbt_streams_files` where stream = '{NAME}' and set_id in ('old-set') "
        "and path <> '') and (true)"
    ) in sql
    assert the_build.source_writes == [] and landing.writes() == []


@pytest.mark.parametrize(
    ("fields", "candidate"),
    [
        ({}, "where true"),
        ({"start": {"timestamp": "2026-11-24 09:00:00"}, "start_at": True},
         "where l.modified > timestamp'2026-11-24 09:00:00'"),
        ({"start": {"timestamp": "2026-11-24 09:00:00"}, "start_at": False},
         "where l.modified >= timestamp'2026-11-24 09:00:00'"),
    ],
)  # fmt: skip
def test_a_new_stream_consumes_every_file_or_those_after_its_start(
    fields: dict, candidate: str
) -> None:
    landing = Landing(new_files=1)
    the_build = build(exists=False)
    resolve(landing, the_build, **fields)
    assert candidate in listing(landing)
    [(write, _)] = the_build.source_writes
    assert LISTING_VIEW in write  # a first set is written from the listing
    refresh = landing.statements.index(
        "refresh table `landing`.`events` /* dbt_spark_streams:listing_follows */"
    )
    assert landing.statements[refresh + 1 : refresh + 2] == [
        f"create or replace temporary view {LISTING_VIEW} as select path, length as size, "
        "modificationTime as modified from binaryFile.`file:/landing/events`",
    ]  # the folder's one listing, just after the table's refresh
    [(record_, _)] = the_build.reads.values()
    assert record_.offset_version == 0


def test_a_new_stream_without_initial_rows_records_the_files_unread() -> None:
    landing = Landing(new_files=3)
    the_build = build(exists=False)
    sql = resolve(landing, the_build, show_initial_rows=False)
    assert not any("bool_and(listed)" in s for s in landing.statements)
    assert "from `landing`.`events` where false)" in sql
    [(write, _)] = the_build.source_writes
    assert write.endswith("where o.path is not null or (false) or (true))")
    assert the_build.moves


def test_a_dry_run_reads_no_file_and_records_nothing() -> None:
    landing = Landing(new_files=3, stored=stored())
    the_build = build(dry_run="--empty")
    assert "from `landing`.`events` where false)" in resolve(landing, the_build)
    assert the_build.reads == {} and not any("dbt_streams" in s for s in landing.statements)
    assert not any(LISTING_VIEW in s for s in landing.statements)  # no listing


def test_every_reference_in_a_build_reads_the_same_files() -> None:
    landing = Landing(new_files=2, stored=stored())
    the_build = build()
    first = resolve(landing, the_build)
    landing.new_files = 5
    assert resolve(landing, the_build) == first
    assert len([s for s in landing.statements if "bool_and(listed)" in s]) == 1


def error(landing: Landing, **fields) -> str:
    with pytest.raises(StreamError) as raised:
        resolve(landing, build(), **fields)
    return raised.value.msg


def test_a_folder_other_than_the_sets_is_stale() -> None:
    landing = Landing(new_files=1, stored=stored(), location="file:/landing/old")
    assert error(landing) == (
        f"Stream {NAME} is stale: source `landing`.`events` now reads {LOCATION}, but the "
        "stream's offset lists the files of file:/landing/old (the table was dropped and "
        "recreated, or altered, over another folder). Rebuild the consumer with --full-refresh "
        "to start the stream over on the new folder."
    )


class LandingWithoutSets(Landing):
    """The log names a file set whose rows are gone from dbt_streams_files."""

    def headers(self) -> Row:
        return {"kind": "set", "path": None, "size": 0, "ms": None}


def test_a_missing_set_names_the_fix() -> None:
    assert error(LandingWithoutSets(new_files=1, stored=stored())) == (
        f"Stream {NAME}: the set of files it consumed (old-set) is missing from "
        "`analytics`.`dbt_streams_files`, so the files it has not consumed cannot be told "
        "apart. Rebuild the consumer with --full-refresh to start the stream over."
    )


def test_a_stream_created_on_a_delta_table_cannot_continue_on_files() -> None:
    assert error(Landing(new_files=1, stored=stored(source_type="delta"))) == (
        f"Stream {NAME} was created on `landing`.`events` as a delta stream in mode "
        "insert_only; it cannot continue as an insert_only stream. Rebuild the consumer with "
        "--full-refresh to recreate it."
    )


def test_history_and_version_points_are_refused() -> None:
    assert error(Landing(new_files=1), every_version=True).startswith(
        f"Stream {NAME}: incremental_strategy 'history' keeps the versions of a Delta table's rows"
    )
    assert error(Landing(new_files=1), start={"version": 3}, start_at=True) == (
        f"Stream {NAME}: a file table has no versions; give at={{'timestamp': "
        "'YYYY-MM-DD HH:MM:SS'} (the files modified after it)."
    )
    assert "give before={'timestamp'" in error(Landing(new_files=1), start={"version": 3})


def test_a_keyed_stream_reads_the_newest_row_per_key() -> None:
    landing = Landing(new_files=1, stored=stored())
    sql = resolve(landing, build(), unique_key=("ID",))
    assert (
        "row_number() over (partition by to_json(named_struct('id', `id`), "
        "map('ignoreNullFields', 'false')) order by _spark_streams_modified desc, "
        "_spark_streams_file desc)"
    ) in sql
    assert sql.endswith(") where _newest = 1")
    with pytest.raises(StreamError) as raised:
        resolve(landing, build(), unique_key=("sku",))
    assert raised.value.msg == (
        f"Stream {NAME}: unique_key column(s) sku not in source `landing`.`events` (columns: "
        "id, day). Name key columns of the source table."
    )


def test_exactly_as_many_files_as_a_read_can_name_are_named() -> None:
    landing = Landing(new_files=LITERAL_FILES, stored=stored())
    the_build = build()
    sql = resolve(landing, the_build)
    assert "_metadata.file_modification_time) in (('file:/landing/events/f0.parquet'" in sql
    [(write, _)] = the_build.source_writes
    assert "union all select * from values ('file:/landing/events/f0.parquet', 10L," in write


def test_a_peek_of_a_new_streams_many_files_after_a_moment() -> None:
    landing = Landing(new_files=LITERAL_FILES + 1)
    the_build = build(consumer=None, exists=False)
    sql = resolve(landing, the_build, start={"timestamp": "2026-11-24 09:00:00"}, start_at=True)
    assert sql.endswith("and (_metadata.file_modification_time > timestamp'2026-11-24 09:00:00'))")


def test_a_full_refresh_starts_the_stream_over() -> None:
    landing = Landing(new_files=2, stored=stored())
    the_build = build(full_refresh=True)
    resolve(landing, the_build)
    assert "and set_id in ('')" in listing(landing)  # no old set: every file is new
    [(record_, _)] = the_build.reads.values()
    assert record_.offset_version == 0
    assert record_.created_on > stored().created_on
