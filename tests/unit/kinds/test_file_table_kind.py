"""The file table as a stream kind, on test_file_table's fake landing folder (no JVM): the
status of an insert-only stream, the build flags and record a build leaves, the plan of what a
build consumes and records unread, the rows a read gives, and the stream named in errors and
warnings."""

from dataclasses import replace
from datetime import datetime

import pytest

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.files.sets import FileEntry, FileSet, FileSets
from dbt.adapters.spark_streams.streams.kinds.file_table import (
    FILE_TABLE,
    LITERAL_FILES,
    FilePlan,
    _plan,
    _set_writes,
    file_rows_sql,
)
from dbt.adapters.spark_streams.streams.offsets.registry import Registry
from dbt.adapters.spark_streams.streams.sql.catalog import CatalogEntry
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.travel.changes import ChangesRequest
from tests.unit.files.test_table import described
from tests.unit.kinds.test_file_sets import file_request, table
from tests.unit.kinds.test_file_table import (
    LOCATION,
    NAME,
    Landing,
    build,
    resolve,
    stored,
)
from tests.unit.kinds.test_table_stream import CONSUMER


class Described(Landing):
    """The landing folder described as `provider` (partitioned by day, the catalog listing
    day=1 only, `unlisted` files elsewhere), its set's header read directly."""

    def __init__(self, provider="parquet", partitioned=False, unlisted=0, **fields) -> None:
        super().__init__(**fields)
        self.provider, self.partitioned, self.unlisted = provider, partitioned, unlisted

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("describe table extended"):
            self.statements.append(sql)
            detail = {"Partition Provider": "Catalog"} if self.partitioned else {}
            return described(self.provider, LOCATION, **detail)
        if sql.startswith("show partitions"):
            return [{"partition": "day=1"}]
        if sql.startswith("select count(*) as files from "):
            self.statements.append(sql)
            return [{"files": self.unlisted}]
        if sql.startswith("select min(location) as location"):
            return [{"location": self.set_location, "parts": 1, "recorded_ms": 0}]
        return super().__call__(sql)


def status(landing: Landing) -> dict:
    return FILE_TABLE.status(landing, Registry(landing, "analytics"), stored())


def test_an_insert_only_stream_is_fresh_while_its_table_reads_the_sets_folder() -> None:
    assert status(Described(new_files=0, stored=stored())) == {
        "stale": False,
        "stale_after": None,
        "stale_reason": "",
    }
    moved = Described(new_files=0, stored=stored(), location="file:/landing/old")
    assert status(moved) == {
        "stale": True,
        "stale_after": None,
        "stale_reason": f"`landing`.`events` now reads {LOCATION}, not file:/landing/old",
    }


def test_a_source_no_longer_a_file_table_is_stale_naming_the_stream() -> None:
    result = status(Described(provider="delta", new_files=0, stored=stored()))
    assert result["stale"] and result["stale_after"] is None
    assert result["stale_reason"].startswith(
        f"Stream {NAME}: source `landing`.`events` is a Delta table;"
    )
    with pytest.raises(StreamError) as raised:
        resolve(Described(provider="delta", new_files=1), build())
    assert raised.value.msg.startswith(f"Stream {NAME}: source `landing`.`events` is a Delta")


def test_a_file_table_has_no_changes_to_read() -> None:
    landing = Described(new_files=0)
    request = ChangesRequest("landing", "events", at={"version": 1})
    with pytest.raises(StreamError) as raised:
        FILE_TABLE.changes(landing, {}, lambda _: None, request, CatalogEntry(landing, "x", "y"))
    assert raised.value.msg == (
        "changes(landing.events): a file table has no versions to read changes between; read "
        "its new files with stream(..., mode='insert_only')."
    )
    assert FILE_TABLE.claims(CatalogEntry(landing, "x", "y"), "insert_only")
    assert not FILE_TABLE.claims(CatalogEntry(landing, "x", "y"), "standard")


def test_dropping_a_stream_deletes_its_file_sets() -> None:
    landing = Described(new_files=0)
    FILE_TABLE.dropped(landing, Registry(landing, "analytics"), stored())
    assert landing.statements[-1] == (
        f"delete from `analytics`.`dbt_streams_files` where stream = '{NAME}'"
    )


def test_files_in_unlisted_partition_folders_are_a_warning_naming_the_stream() -> None:
    landing = Described(partitioned=True, unlisted=2, new_files=1, stored=stored())
    the_build = build()
    resolve(landing, the_build)
    [warning] = the_build.warnings
    assert warning.startswith(
        f"Stream {NAME}: 2 file(s) under {LOCATION} are in partition folders that "
        "`landing`.`events` does not list"
    )


def test_a_build_of_files_bounds_no_change_set_and_records_its_generation() -> None:
    the_build = build()
    before = datetime.now()
    resolve(Described(new_files=2, stored=stored()), the_build)
    assert the_build.only_appends is False and the_build.only_deletes is False
    assert the_build.change_rows is None
    [(record, _)] = the_build.reads.values()
    assert record.offset_version == 4 and record.offset_timestamp >= before
    assert record.created_on == stored().created_on  # the stream goes on: not recreated


def test_a_dry_run_reads_the_keyed_columns_and_no_row() -> None:
    sql = resolve(Described(new_files=1, stored=stored()), build(dry_run="--empty"),
                  unique_key=("ID",))  # fmt: skip
    assert "row_number() over (partition by to_json(named_struct('id', `id`)" in sql
    assert "from `landing`.`events` where false)" in sql


def test_a_stream_taken_over_from_a_consumer_gone_starts_over() -> None:
    gone = replace(stored(), consumer="model.shop.gone")
    the_build = build(exists=False, project_consumers=(CONSUMER,))
    resolve(Described(new_files=2, stored=gone), the_build)
    [(record, _)] = the_build.reads.values()
    assert (record.offset_version, record.consumer) == (0, CONSUMER)
    assert the_build.warnings[0].startswith(f"Stream {NAME}: taken over by {CONSUMER} from ")


def test_a_new_stream_over_an_empty_folder_records_its_empty_set() -> None:
    the_build = build(exists=False)
    resolve(Described(new_files=0), the_build)
    assert the_build.moves
    [(write, _)] = the_build.source_writes
    assert write.startswith("insert into `analytics`.`dbt_streams_files` ")


class Pending(FileSets):
    """File sets whose listing finds `count` new files."""

    def __init__(self, count: int) -> None:
        super().__init__(lambda sql: [], "`l`.`dbt_streams_files`")
        self.count = count

    def pending(self, table, stream, old_id, candidate, limit):
        return [FileEntry(f"file:/f{n}", n, n) for n in range(min(self.count, limit))], None


def plan(count: int, old_id: str | None, new_id: str | None = "new", **request) -> FilePlan:
    return _plan(Pending(count), table(), file_request(**request), old_id, new_id)[0]


def test_a_plan_of_nothing_consumes_nothing_and_records_the_rest_unread() -> None:
    assert plan(0, "old") == FilePlan("false", "false", "false", 0)
    no_initial = plan(3, None, show_initial_rows=False)
    assert (no_initial.consume, no_initial.skip, no_initial.read_filter, no_initial.pending) == (
        "false",
        "true",
        "false",
        0,
    )


def test_a_later_plan_records_every_unread_file_as_consumed() -> None:
    for count in (2, LITERAL_FILES + 1):
        later = plan(count, "old")
        assert later.skip == "false" and later.pending == count
    assert plan(2, "old").consume.startswith("(l.path, l.size, l.modified) in (('file:/f0', 0L")
    assert plan(LITERAL_FILES + 1, "old").consume == "true"
    assert plan(LITERAL_FILES + 1, "old", None).consume == "true"
    # show_initial_rows and a start point shape a new stream only
    moment = {"timestamp": "2026-11-25 10:00:00"}
    for request in ({"show_initial_rows": False}, {"start": moment, "start_at": True}):
        assert plan(LITERAL_FILES + 1, "old", **request).consume == "true"
        assert plan(2, "old", **request).pending == 2


def test_a_new_plan_after_a_moment_skips_the_files_before_it() -> None:
    start = {"start": {"timestamp": "2026-11-25 10:00:00"}, "start_at": True}
    after = "l.modified > timestamp'2026-11-25 10:00:00'"
    for count, new_id in ((2, "new"), (LITERAL_FILES + 1, "new"), (LITERAL_FILES + 1, None)):
        new = plan(count, None, new_id, **start)
        assert new.skip == f"not ({after})"
    assert plan(LITERAL_FILES + 1, None, **start).consume == after


def test_rows_of_unkeyed_files_are_told_apart_by_file_and_occurrence() -> None:
    sql = file_rows_sql(table(), (), "true")
    assert sql.startswith("select `id`, 'INSERT' as metadata_action, false as metadata_isupdate")
    assert (
        "sha1(concat(_spark_streams_file, '#', to_json(named_struct('id', `id`), "
        "map('ignoreNullFields', 'false')), '#', row_number() over (partition by "
        "_spark_streams_file, to_json(named_struct('id', `id`), map('ignoreNullFields', "
        "'false')) order by 1))) as metadata_row_id"
    ) in sql
    assert "cast(null as bigint) as metadata_commit_version" in sql
    assert "_spark_streams_modified as metadata_commit_timestamp from (select `id`, " in sql
    keyed = file_rows_sql(table(), ("id",), "true")
    assert keyed.startswith("select `id`, 'INSERT' as metadata_action")
    assert "sha1(to_json(named_struct('id', `id`), map('ignoreNullFields', 'false'))) as " in keyed


def test_a_renewed_chain_keeps_the_old_sets_files_from_the_listing() -> None:
    sets = FileSets(lambda sql: [], "`l`.`dbt_streams_files`")
    new_plan = _plan(Pending(LITERAL_FILES + 1), table(), file_request(), "old", "new")[0]
    [(write, _), _] = _set_writes(
        sets, table(), file_request(), FileSet("old", "x", 0), "new", new_plan, renews=True
    )
    assert (
        "left join (select path, size, modified from `l`.`dbt_streams_files` where stream = 's' "
        "and set_id in ('old') and path <> '') o on "
    ) in write
    [(first, _)] = _set_writes(sets, table(), file_request(), None, "new", new_plan, renews=True)
    assert "left join (select '' as path, 0L as size" in first  # a first set: no old files


def test_history_is_refused_naming_the_strategies_that_fit() -> None:
    with pytest.raises(StreamError) as raised:
        resolve(Described(new_files=1), build(), every_version=True)
    assert raised.value.msg == (
        f"Stream {NAME}: incremental_strategy 'history' keeps the versions of a Delta table's "
        "rows; an insert_only stream's rows are new files' rows, each once. Use "
        "incremental_strategy 'append' (or apply_changes with a unique_key)."
    )


class Gone(Described):
    """The landing folder, deleted: listing it fails as Spark does."""

    def __call__(self, sql: str) -> list[Row]:
        if sql.startswith("refresh table"):
            raise RuntimeError("[PATH_NOT_FOUND] Path does not exist: file:/landing/events")
        return super().__call__(sql)


def test_a_deleted_folder_is_an_error_naming_the_stream() -> None:
    with pytest.raises(StreamError) as raised:
        resolve(Gone(new_files=0, stored=stored()), build())
    assert raised.value.msg == (
        f"Stream {NAME}: the location {LOCATION} of source `landing`.`events` no longer exists, "
        "so its files cannot be listed. Restore the folder, or point the table at its new "
        "location and rebuild the consumer with --full-refresh."
    )
