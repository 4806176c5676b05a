"""Insert-only streams on file-based tables, as a user lands files: Parquet files written by
Spark, CSV files with a header and JSON lines files dropped by hand, a partitioned folder.
Each file's rows land once: new files after each build, a file rewritten in place (counted as
new), a removed file (ignored), a failed build (nothing consumed), --empty, a build with more
new files than a read names (read through its file set), and the errors a user can meet.
"""

import os
import shutil
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.spark_streams.streams.files import sets as file_sets
from dbt.adapters.spark_streams.streams.kinds import file_table as file_stream
from tests.functional.delta import FAIL_IF_ASKED, DeltaProject

SOURCES = """
version: 2
sources:
  - name: landing
    schema: "{{ target.schema }}"
    tables: [{name: events}, {name: clicks}, {name: visits}, {name: daily}]
"""
INSERT_ONLY = "mode='insert_only'"
MODELS = {
    "events_log": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append', "
        'pre_hook="{{ fail_if_asked() }}") }}\n'
        f"select * from {{{{ stream(source('landing', 'events'), {INSERT_ONLY}) }}}}\n"
    ),
    "events_latest": (
        "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
        "unique_key='id') }}\n"
        "select id, kind, metadata_action, metadata_isupdate from "
        "{{ stream(source('landing', 'events'), mode='insert_only') }}\n"
    ),
    "clicks_log": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        f"select * from {{{{ stream(source('landing', 'clicks'), {INSERT_ONLY}) }}}}\n"
    ),
    "visits_log": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        f"select * from {{{{ stream(source('landing', 'visits'), {INSERT_ONLY}) }}}}\n"
    ),
    "daily_log": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        f"select * from {{{{ stream(source('landing', 'daily'), {INSERT_ONLY}) }}}}\n"
    ),
    "events_later": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        "select * from {{ stream(source('landing', 'events'), mode='insert_only', "
        "show_initial_rows=false) }}\n"
    ),
}


class TestFileStreams(DeltaProject):
    @pytest.fixture(scope="class")
    def macros(self):
        return {"fail_if_asked.sql": FAIL_IF_ASKED}

    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, **{f"{n}.sql": t for n, t in MODELS.items()}}

    def test_each_file_once(self, project, tmp_path_factory, monkeypatch):
        landing = tmp_path_factory.mktemp("landing")
        schema, sql = project.test_schema, project.run_sql
        for name, spec in (
            ("events", "(id int, kind string) using parquet"),
            ("clicks", "(id int, page string) using csv options (header true)"),
            ("visits", "(id int, page string) using json"),
            ("daily", "(id int, day int) using parquet partitioned by (day)"),
        ):
            sql(f"create table {schema}.{name} {spec} location '{landing / name}'")
        (landing / "clicks").mkdir(exist_ok=True)
        (landing / "visits").mkdir(exist_ok=True)
        one_file = "select /*+ coalesce(1) */ * from values (1, 'a'), (2, 'b')"
        sql(f"insert into {schema}.events {one_file}")
        (landing / "clicks" / "c1.csv").write_text("id,page\n1,home\n1,home\n")
        (landing / "visits" / "v1.json").write_text('{"id": 1, "page": "home"}\n')
        sql(f"insert into {schema}.daily values (1, 1), (2, 2)")

        run_dbt(["run", "--empty"])  # creates the targets empty and consumes nothing
        assert self.ids(project, "events_log") == []

        run_dbt(["run", "--threads", "3"])
        assert self.ids(project, "events_log") == [1, 2]
        assert self.rows(project, "clicks_log", "id, page") == [(1, "home"), (1, "home")]
        assert self.rows(project, "visits_log", "id, page") == [(1, "home")]
        assert self.rows(project, "daily_log", "id, day") == [(1, 1), (2, 2)]
        assert self.ids(project, "events_later") == []
        assert self.offsets(project)["events_log__events"] == (0, "files", "insert_only")
        # two equal rows of one file keep two row ids
        assert len(set(self.rows(project, "clicks_log", "metadata_row_id"))) == 2

        [rewritten] = self.files(landing / "events")
        sql(f"insert into {schema}.events values (3, 'c')")
        shutil.copy(self.parquet_of(project, landing, "(1, 'a2'), (4, 'd')"), rewritten)
        # (Hadoop's local file system checks a file against its .crc, which a copy leaves stale)
        (rewritten.parent / f".{rewritten.name}.crc").unlink()
        (landing / "clicks" / "c2.csv").write_text("id,page\n2,cart\n")
        (landing / "visits" / "v2.json").write_text('{"id": 2, "page": "cart"}\n')
        sql(f"insert into {schema}.daily values (3, 3)")
        # a file in a partition the catalog does not list yet waits for MSCK REPAIR TABLE
        unlisted = landing / "daily" / "day=9"
        unlisted.mkdir()
        shutil.copy(self.parquet_of(project, landing, "(9)", "id"), unlisted / "p.parquet")

        before = self.offsets(project)
        run_dbt(["run", "-s", "events_log", "--vars", "{fail: true}"], expect_pass=False)
        assert self.ids(project, "events_log") == [1, 2]
        assert self.offsets(project) == before

        _, log = run_dbt_and_capture(["run", "--threads", "3"])
        # the rewritten file counts as new: its rows land (its old rows stay, as appended)
        assert self.ids(project, "events_log") == [1, 1, 2, 3, 4]
        assert self.rows(project, "events_latest", "id, kind") == [
            (1, "a2"),
            (2, "b"),
            (3, "c"),
            (4, "d"),
        ]
        assert self.ids(project, "events_later") == [1, 3, 4]
        assert self.rows(project, "clicks_log", "id, page")[-1] == (2, "cart")
        assert self.rows(project, "visits_log", "id, page") == [(1, "home"), (2, "cart")]
        assert self.rows(project, "daily_log", "id, day") == [(1, 1), (2, 2), (3, 3)]
        assert (
            f"Stream daily_log__daily: 1 file(s) under file:{landing}/daily are in partition "
            f"folders that `{schema}`.`daily` does not list, so no stream reads them yet."
        ) in " ".join(log.split())
        assert self.offsets(project)["events_log__events"] == (1, "files", "insert_only")

        for path in self.files(landing / "events"):
            os.remove(path)  # removed files are ignored
        sql(f"insert into {schema}.events values (5, 'e')")
        sql(f"msck repair table {schema}.daily")
        monkeypatch.setattr(file_stream, "LITERAL_FILES", 0)  # read through the file set
        # ... and start a new set from a listing of the folder, deleting the parts written
        # before the committed set's first (the default waits an hour)
        monkeypatch.setattr(file_sets, "CLEANUP_EVERY", 1)
        monkeypatch.setattr(file_sets, "CLEANUP_MARGIN_MS", 0)
        run_dbt(["run", "--threads", "3"])
        # the committed set's two parts (its first, and the last build's new files) and the new
        assert self.set_ids(project, "events_log__events") == 3
        assert self.ids(project, "events_log") == [1, 1, 2, 3, 4, 5]
        assert self.rows(project, "daily_log", "id, day")[-1] == (9, 9)
        assert self.ids(project, "events_later") == [1, 3, 4, 5]

        _, log = run_dbt_and_capture(["run", "-s", "events_log"])
        assert "no pending changes" in log
        assert self.ids(project, "events_log") == [1, 1, 2, 3, 4, 5]

        _, log = run_dbt_and_capture(["run-operation", "show_streams"])
        [shown] = [line for line in log.splitlines() if "| events_log__events " in line]
        cells = [cell.strip() for cell in shown.split("|")[1:-1]]
        assert cells[2:4] == ["files", "insert_only"] and cells[7] == "false"

        # the table now reads another folder: the stream is stale until a full refresh
        moved = landing / "moved"
        moved.mkdir()
        shutil.copy(self.parquet_of(project, landing, "(7, 'g')"), moved / "g.parquet")
        sql(f"alter table {schema}.events set location '{moved}'")
        [result] = run_dbt(["run", "-s", "events_log"], expect_pass=False)
        assert (
            f"Stream events_log__events is stale: source `{schema}`.`events` now reads "
            f"file:{moved}, but the stream's offset lists the files of file:{landing}/events"
        ) in " ".join(result.message.split())
        run_dbt(["run", "-s", "events_log", "--full-refresh"])
        assert self.ids(project, "events_log") == [7]

    @staticmethod
    def files(folder: Path) -> list[Path]:
        return sorted(p for p in folder.iterdir() if p.name.startswith("part-"))

    @staticmethod
    def parquet_of(project, landing: Path, values: str, columns: str = "id, kind"):
        """A Parquet file of `values`, written by Spark into a scratch folder (one file: a
        server with more cores writes one per task)."""
        scratch = landing / "scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        project.run_sql(
            f"insert overwrite directory '{scratch}' using parquet "
            f"select /*+ coalesce(1) */ * from values {values} as t({columns})"
        )
        return next(p for p in scratch.iterdir() if p.name.startswith("part-"))

    @staticmethod
    def set_ids(project, stream: str) -> int:
        [[count]] = project.run_sql(
            f"select count(distinct set_id) from {project.test_schema}.dbt_streams_files "
            f"where stream = '{stream}'",
            fetch="all",
        )
        return count

    @staticmethod
    def ids(project, table: str) -> list[int]:
        rows = project.run_sql(f"select id from {project.test_schema}.{table}", fetch="all")
        return sorted(row[0] for row in rows)

    @staticmethod
    def rows(project, table: str, columns: str) -> list[tuple]:
        got = project.run_sql(f"select {columns} from {project.test_schema}.{table}", fetch="all")
        return sorted(tuple(row) for row in got)

    @staticmethod
    def offsets(project) -> dict[str, tuple]:
        rows = project.run_sql(
            "select name, offset_version, source_type, mode from "
            f"{project.test_schema}.dbt_streams",
            fetch="all",
        )
        return {row[0]: tuple(row[1:]) for row in rows}
