"""What a stream build leaves behind: the target's table properties and the registry's log."""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import pytest
from dbt.tests.util import get_connection, run_dbt, run_dbt_and_capture

from dbt.adapters.spark_streams.streams.offsets.registry import (
    COMPACT_EVERY,
    REGISTRY_COLUMNS,
    Registry,
)
from tests.functional.delta import (
    DeltaProject,
    delta_project,
    shown_streams,
    sources_yml,
    table_properties,
)

SOURCES = sources_yml("shop", "customers")

MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select * from {{ stream(source('shop', 'customers')) }}
"""

PLAIN_MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id', tblproperties={'delta.enableDeletionVectors': 'false',
                                          'delta.enableChangeDataFeed': 'false',
                                          'owner_note': "Ann's table"}) }}
select * from {{ stream(source('shop', 'customers')) }}
"""


SMALL_FILES_MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id', file_rows=10, key_ranges=true) }}
select * from {{ stream(source('shop', 'customers')) }}
"""

# key_ranges 'auto' (the default): a target this small is joined without them
UNCAPPED_MIRROR = SMALL_FILES_MIRROR.replace(
    "file_rows=10, key_ranges=true", "file_rows=0, broadcast_change_rows=0"
)


def key_ranges(project, table: str) -> list[tuple[int, int, int]]:
    """(lowest id, highest id, rows) of each data file of the table, by lowest id."""
    rows = project.run_sql(
        f"select min(id), max(id), count(*) from {project.test_schema}.{table} "
        "group by input_file_name() order by 1",
        fetch="all",
    )
    return [tuple(row) for row in rows]


@contextmanager
def hidden_data_file(project, table: str, key: int) -> Iterator[None]:
    """The table's data file holding `key` moved aside for the block, so reading it fails."""
    [(uri,)] = project.run_sql(
        f"select distinct input_file_name() from {project.test_schema}.{table} where id = {key}",
        fetch="all",
    )
    path = Path(urlparse(uri).path)
    aside = path.with_name(path.name + ".hidden")
    path.rename(aside)
    try:
        yield
    finally:
        aside.rename(path)


class TestFileLayout(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES,
            "small_files_mirror.sql": SMALL_FILES_MIRROR,
            "uncapped_mirror.sql": UNCAPPED_MIRROR,
        }

    def test_file_rows_caps_files_in_key_order(self, project):
        schema = project.test_schema
        project.run_sql(f"create table {schema}.customers (id int, name string) using delta")
        # ids arrive out of order, in one file
        project.run_sql(
            f"insert into {schema}.customers select /*+ REPARTITION(1) */ (id * 37) % 50, "
            "concat('c', id) from range(50)"
        )
        run_dbt(["run"])

        ranges = key_ranges(project, "small_files_mirror")
        assert [count for _, _, count in ranges] == [10] * 5
        assert [(low, high) for low, high, _ in ranges] == [
            (0, 9),
            (10, 19),
            (20, 29),
            (30, 39),
            (40, 49),
        ]
        assert len(key_ranges(project, "uncapped_mirror")) < 5  # Spark's own file sizes

        project.run_sql(f"update {schema}.customers set name = 'new' where id in (3, 5)")
        # The change set's keys as two ranges: Delta reads none of the four target files that
        # cannot hold them (without the ranges, the MERGE fails on the hidden file).
        with hidden_data_file(project, "small_files_mirror", key=45):
            _, log = run_dbt_and_capture(["--debug", "run"])
        assert "on t.`id` <=> s.`id` and (t.`id` between 3 and 3 or t.`id` between 5 and 5)" in log
        [merge] = project.run_sql(
            f"describe history {schema}.small_files_mirror limit 1", fetch="all"
        )
        assert merge["operation"] == "MERGE"
        assert merge["operationMetrics"]["numTargetDeletionVectorsAdded"] == "1"  # one file
        assert re.search(r"on t.`id` <=> s.`id`\s+when matched", log)  # uncapped: no ranges
        rows = project.run_sql(
            f"select id from {schema}.small_files_mirror where name = 'new' order by id",
            fetch="all",
        )
        assert [row[0] for row in rows] == [3, 5]
        assert project.run_sql(
            f"select id from {schema}.uncapped_mirror where name = 'new' order by id", fetch="all"
        ) == [(3,), (5,)]

        # The four change rows (two updates) are under broadcast_change_rows: the change set
        # carries the broadcast hint; with broadcast_change_rows=0 it does not.
        hinted = (
            r"temporary view\s+\S*{}__dbt_tmp\s+as\s+select /\*\+ BROADCAST\(_stream_changes\)"
        )
        assert re.search(hinted.format("small_files_mirror"), log)
        assert re.search(r"temporary view\s+\S*uncapped_mirror__dbt_tmp", log)
        assert not re.search(hinted.format("uncapped_mirror"), log)

        # A null key: the MERGE matches null keys (<=>), so its ranges keep null target keys.
        project.run_sql(f"insert into {schema}.customers values (null, 'nobody')")
        run_dbt(["run"])
        project.run_sql(f"update {schema}.customers set name = 'somebody' where id is null")
        _, log = run_dbt_and_capture(["--debug", "run"])
        assert "t.`id` is null)" in log
        for mirror in ("small_files_mirror", "uncapped_mirror"):
            assert project.run_sql(
                f"select name from {schema}.{mirror} where id is null", fetch="all"
            ) == [("somebody",)]


class TestTargetAndRegistry(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, "mirror.sql": MIRROR, "plain_mirror.sql": PLAIN_MIRROR}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        """A hook that lists the streams after the run's builds (the registry append comes
        after it, when dbt closes its connections)."""
        return delta_project(**{"on-run-end": ["{{ show_streams(format='json') if execute }}"]})

    def test_deletion_vectors_and_offset_log(self, project):
        schema = project.test_schema
        project.run_sql(f"create table {schema}.customers (id int, name string) using delta")
        project.run_sql(f"insert into {schema}.customers values (1, 'Ann'), (2, 'Bob')")
        run_dbt(["run"])  # reads up to version 1; version 2 turns Change Data Feed on
        project.run_sql(f"update {schema}.customers set name = 'Bo' where id = 2")
        project.run_sql(f"delete from {schema}.customers where id = 1")
        _, output = run_dbt_and_capture(["run"])  # reads versions 2 to 4

        # the on-run-end hook's show_streams shows the offsets this run's builds committed
        shown = shown_streams(output)
        assert {(s["name"], s["offset_version"]) for s in shown.values()} == {
            ("mirror__customers", 4),
            ("plain_mirror__customers", 4),
        }
        assert table_properties(project, "mirror")["delta.enableDeletionVectors"] == "true"
        plain = table_properties(project, "plain_mirror")
        assert plain["delta.enableDeletionVectors"] == "false"
        assert plain["delta.enableChangeDataFeed"] == "false"  # over the profile's default
        assert plain["owner_note"] == "Ann's table"
        for target in ("mirror", "plain_mirror"):
            rows = project.run_sql(f"select id, name from {schema}.{target}", fetch="all")
            assert [tuple(row) for row in rows] == [(2, "Bo")]

        [merge] = project.run_sql(f"describe history {schema}.mirror limit 1", fetch="all")
        assert merge["operation"] == "MERGE"
        assert merge["operationMetrics"]["numTargetRowsCopied"] == "0"  # rows marked, not copied
        assert merge["operationMetrics"]["numTargetChangeFilesAdded"] == "1"
        [merge] = project.run_sql(f"describe history {schema}.plain_mirror limit 1", fetch="all")
        assert merge["operationMetrics"]["numTargetChangeFilesAdded"] == "0"  # no feed: no files

        log = project.run_sql(
            f"select name, offset_version, txn_version from {schema}.dbt_streams_log",
            fetch="all",
        )
        for name in ("mirror__customers", "plain_mirror__customers"):
            moves = sorted((txn, offset) for stream, offset, txn in log if stream == name)
            # the first build read up to 1 or 2 (whichever consumer turned the feed on first)
            assert [txn for txn, _ in moves] == [1, 2]
            assert moves[0][1] in (1, 2) and moves[1][1] == 4
        writes = project.run_sql(f"describe history {schema}.dbt_streams_log", fetch="all")
        # one append per dbt run, for both consumers
        assert [row["operation"] for row in writes].count("WRITE") == 2
        latest = project.run_sql(
            f"select name, offset_version from {schema}.dbt_streams order by name", fetch="all"
        )
        assert [tuple(row) for row in latest] == [
            ("mirror__customers", 4),
            ("plain_mirror__customers", 4),
        ]

    def test_a_registry_kept_as_a_table_moves_into_the_log(self, project):
        schema = f"{project.test_schema}_old"
        project.run_sql(f"create schema {schema}")
        try:
            project.run_sql(f"create table {schema}.dbt_streams ({REGISTRY_COLUMNS}) using delta")
            project.run_sql(
                f"insert into {schema}.dbt_streams (name, offset_version, txn_version) "
                "values ('orders_stream', 7, 3)"
            )
            with get_connection(project.adapter):
                registry = Registry(project.adapter.run_rows, schema)
                old = registry.get("orders_stream")
                assert old is not None and old.offset_version == 7
                registry.append([replace(old, offset_version=9, txn_version=4)])
                moved = registry.get("orders_stream")
                assert moved is not None and moved.offset_version == 9
            views = project.run_sql(f"show views in {schema}", fetch="all")
            assert [row[1] for row in views if not row[2]] == ["dbt_streams"]  # not temporary
            log = project.run_sql(
                f"select offset_version from {schema}.dbt_streams_log order by txn_version",
                fetch="all",
            )
            assert [row[0] for row in log] == [7, 9]

            with get_connection(project.adapter):
                registry = Registry(project.adapter.run_rows, schema, compact_at_files=2)
                registry.compact()  # two appends, two files: compacted into one
            [detail] = project.run_sql(f"describe detail {schema}.dbt_streams_log", fetch="all")
            assert detail["numFiles"] == 1
        finally:
            project.run_sql(f"drop schema if exists {schema} cascade")

    def test_every_16th_transaction_compacts_a_log_of_many_files(self, project):
        schema = f"{project.test_schema}_busy"
        log = f"{schema}.dbt_streams_log"

        def files() -> int:
            [detail] = project.run_sql(f"describe detail {log}", fetch="all")
            return int(detail["numFiles"])

        try:
            with get_connection(project.adapter):
                registry = Registry(project.adapter.run_rows, schema, compact_at_files=3)
                registry.ensure()
                project.run_sql(
                    f"insert into {log} (name, offset_version, txn_version) "
                    "values ('orders_stream', 1, 1)"
                )
                first = registry.get("orders_stream")
                assert first is not None
                for txn in range(2, COMPACT_EVERY):  # no compaction before the 16th
                    registry.append([replace(first, offset_version=txn, txn_version=txn)])
                assert files() == COMPACT_EVERY - 1
                registry.append([replace(first, offset_version=99, txn_version=COMPACT_EVERY)])
                assert files() == 1
                newest = registry.get("orders_stream")
                assert newest is not None and newest.offset_version == 99
        finally:
            project.run_sql(f"drop schema if exists {schema} cascade")


class TestRegistryRollForward(DeltaProject):
    """A crash after the commit leaves the registry behind; the next build catches it up,
    whether or not it has changes to write."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, "mirror.sql": MIRROR}

    def registered(self, project) -> list[tuple[int, int]]:
        rows = project.run_sql(
            f"select offset_version, txn_version from {project.test_schema}.dbt_streams",
            fetch="all",
        )
        return [tuple(row) for row in rows]

    def lose_newest_registry_row(self, project) -> None:
        log = f"{project.test_schema}.dbt_streams_log"
        [newest] = project.run_sql(f"select max(txn_version) from {log}", fetch="one")
        project.run_sql(f"delete from {log} where txn_version = {newest}")

    def test_registry_catches_up_with_the_target(self, project):
        schema = project.test_schema
        project.run_sql(f"create table {schema}.customers (id int, name string) using delta")
        project.run_sql(f"insert into {schema}.customers values (1, 'Ann')")
        [first] = run_dbt(["run"])  # offset 1 (version 2 turns Change Data Feed on), txn 1
        project.run_sql(f"insert into {schema}.customers values (2, 'Bob')")
        [second] = run_dbt(["run"])  # offset 3, transaction 2
        assert self.registered(project) == [(3, 2)]
        # The result line and run_results.json say what each write did (Delta's metrics).
        consumed = "OK, consumed mirror__customers: "
        assert first.message == consumed + "1 inserted, 0 updated, 0 deleted"
        assert second.adapter_response == {
            "_message": consumed + "1 inserted, 0 updated, 0 deleted",
            "rows_affected": 1,
            "rows_inserted": 1,
            "rows_updated": 0,
            "rows_deleted": 0,
            "build_path": "incremental",
        }

        self.lose_newest_registry_row(project)
        assert self.registered(project) == [(1, 1)]
        [result] = run_dbt(["run"])  # nothing pending: no write, but the registry catches up
        assert result.adapter_response["_message"] == "OK, no pending changes"
        assert self.registered(project) == [(3, 2)]

        self.lose_newest_registry_row(project)
        project.run_sql(f"update {schema}.customers set name = 'Bo' where id = 2")
        [third] = run_dbt(["run"])  # offsets and transaction from the target, not the registry
        assert self.registered(project) == [(4, 3)]
        assert third.message == consumed + "0 inserted, 1 updated, 0 deleted"
        rows = project.run_sql(f"select id, name from {schema}.mirror order by id", fetch="all")
        assert [tuple(row) for row in rows] == [(1, "Ann"), (2, "Bo")]
