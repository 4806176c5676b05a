"""The parts of an insert-only stream's file set, without Spark: the listing of a file table,
the file literals a read names, which files a new stream starts with, which writes record a
build's file set, and when a chain of sets starts anew.
"""

from datetime import datetime

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.files.sets import FileEntry, FileSet, FileSets
from dbt.adapters.spark_streams.streams.files.table import FileTable
from dbt.adapters.spark_streams.streams.kinds.file_table import (
    FilePlan,
    _new_stream_files,
    _renews,
    _set_writes,
)
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.offsets.registry import StreamRecord


def table(partitions: tuple[str, ...] | None = None) -> FileTable:
    return FileTable("`l`.`events`", "parquet", "file:/land/events", ("id",), ("int",), partitions)


def file_request(**changes) -> StreamRequest:
    values = dict(
        name="s",
        schema="l",
        identifier="events",
        mode="insert_only",
        unique_key=(),
        show_initial_rows=True,
        start=None,
        start_at=False,
    )
    return StreamRequest(**{**values, **changes})


def set_record(generation: int) -> StreamRecord:
    now = datetime(2026, 11, 25)
    return StreamRecord(
        "s", "l", "`l`.`events`", "old", "files", "insert_only", (), "m", "t", generation, now,
        1, now, now,
    )  # fmt: skip


def test_listing_reads_the_builds_listing_of_file_metadata():
    assert table().listing_sql() == f"select path, size, modified from {table().listing_view}"
    assert (
        table()
        .listing_view_sql()
        .endswith(
            "as select path, length as size, modificationTime as modified "
            "from binaryFile.`file:/land/events`"
        )
    )


def test_listing_keeps_the_catalogs_partition_folders_only():
    assert "in ('day=1', 'day=2')" in table(("day=1", "day=2")).listing_sql()
    assert "in (null)" in table(()).listing_sql()  # no partition registered: no file
    assert table().unlisted_sql() is None


def test_a_file_literal_compares_with_listed_columns():
    entry = FileEntry("file:/land/it's.parquet", 10, 1_795_000_000_123)
    assert entry.literal() == (
        "('file:/land/it\\'s.parquet', 10L, timestamp_millis(1795000000123L))"
    )


@pytest.mark.parametrize(
    ("changes", "consumed", "skipped"),
    [
        ({}, "true", "false"),
        ({"show_initial_rows": False}, "false", "true"),
        (
            {"start": {"timestamp": "2026-11-25 10:00:00"}, "start_at": True},
            "l.modified > timestamp'2026-11-25 10:00:00'",
            "not (l.modified > timestamp'2026-11-25 10:00:00')",
        ),
        (
            {"start": {"timestamp": "2026-11-25 10:00:00"}},
            "l.modified >= timestamp'2026-11-25 10:00:00'",
            "not (l.modified >= timestamp'2026-11-25 10:00:00')",
        ),
    ],
)
def test_a_new_stream_starts_with_these_files(changes, consumed, skipped):
    assert _new_stream_files(file_request(**changes)) == (consumed, skipped)


def test_a_set_is_continued_by_a_part_of_the_files_a_read_names():
    sets = FileSets(lambda sql: [], "`l`.`dbt_streams_files`")
    named = (FileEntry("file:/a", 1, 2),)
    plan = FilePlan("c", "false", "f", 1, named)
    [(write, _)] = _set_writes(sets, table(), file_request(), FileSet("old", "x", 0), "new", plan,
                               renews=False)  # fmt: skip
    assert "union all select * from values ('file:/a', 1L, timestamp_millis(2L), true)" in write
    assert table().listing_view not in write and "'old'" not in write  # the new files only


@pytest.mark.parametrize(
    ("set_id", "generation", "renews"),
    [
        ("old", 3, False),
        ("old", 15, True),  # every sixteenth set
        ("+".join(["part"] * 15), 3, False),
        ("+".join(["part"] * 16), 3, True),  # a set of sixteen parts
    ],
)
def test_every_sixteenth_set_or_part_starts_a_new_chain(set_id, generation, renews):
    assert _renews(FileSet(set_id, "x", 0), set_record(generation)) is renews
    assert _renews(None, set_record(generation)) and _renews(FileSet(set_id, "x", 0), None)


def test_a_new_chain_lists_the_folder_and_deletes_old_parts():
    sets = FileSets(lambda sql: [], "`l`.`dbt_streams_files`")
    plan = FilePlan("c", "false", "f", 1, (FileEntry("file:/a", 1, 2),))
    old = FileSet("old", "x", 7_200_000)
    [(write, _), (cleanup, _)] = _set_writes(sets, table(), file_request(), old, "new", plan,
                                             renews=True)  # fmt: skip
    assert table().listing_view in write
    assert cleanup == (
        "delete from `l`.`dbt_streams_files` where stream = 's' "
        "and recorded_at < timestamp_millis(3600000L) and set_id not in ('old')"
    )


def test_a_missing_committed_set_is_an_error_naming_the_fix():
    sets = FileSets(lambda sql: [], "`l`.`dbt_streams_files`")
    with pytest.raises(
        StreamError, match=r"is missing from `l`\.`dbt_streams_files`.*--full-refresh"
    ):
        sets.committed("s", "gone")
