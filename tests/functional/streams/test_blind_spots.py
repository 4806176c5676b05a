"""Three guarantees an injected fault once slipped past the suite (each test below was checked
to fail with its fault in place):

- repeatable read: a commit that lands while a build runs is read by none of its references,
  and the offsets stop at the version the build pinned (fault: the source's version re-read at
  every reference);
- many more pending commits than the first read of history (the newest commit) are consumed
  exactly, in both modes (fault: the pending range read from the newest commit alone, so such
  a stream reads as stale);
- a source's log retention shorter than max_data_extension_time is raised with its
  deleted-files retention (fault: only the deleted-files retention raised).
"""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import (
    DeltaProject,
    latest_version,
    run_in_one_session,
    sources_yml,
    table_properties,
)

# Two references to one source in one build; between them (with --vars '{land: n}') the model
# commits a row n to that source, as a concurrent writer would.
PINNED = """
{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select id, 'first' as reference from {{ stream(source('shop', 'pinned'), name='pinned__first') }}
{% if execute and var('land', none) is not none %}
  {% do run_query('insert into ' ~ source('shop', 'pinned') ~ ' values (' ~ var('land') ~ ')') %}
{% endif %}
union all
select id, 'second' as reference
from {{ stream(source('shop', 'pinned'), name='pinned__second', mode='append_only') }}
"""

MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select * from {{ stream(source('shop', 'busy'), unique_key='id') }}
"""

AUDIT = """
{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select id, v from {{ stream(source('shop', 'busy'), mode='append_only') }}
"""

RETAINED = """
{{ config(materialized='stream_incremental', incremental_strategy='append',
          max_data_extension_time=14) }}
select id from {{ stream(source('shop', 'retained'), mode='append_only') }}
"""


def rows(project, sql: str) -> list[tuple]:
    return [tuple(row) for row in project.run_sql(sql, fetch="all")]


def offsets(project) -> dict[str, int]:
    found = rows(project, f"select name, offset_version from {project.test_schema}.dbt_streams")
    return dict(found)


class TestBlindSpots(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("shop", "pinned", "busy", "retained"),
            "both.sql": PINNED,
            "mirror.sql": MIRROR,
            "audit.sql": AUDIT,
            "retained.sql": RETAINED,
        }

    def test_a_commit_during_a_build_is_read_by_no_reference(self, project):
        schema = project.test_schema
        project.run_sql(f"create table {schema}.pinned (id int) using delta")
        project.run_sql(f"insert into {schema}.pinned values (1)")
        run_dbt(["run", "-s", "both"])
        project.run_sql(f"insert into {schema}.pinned values (2)")
        pinned_at = latest_version(project, "pinned")

        run_dbt(["run", "-s", "both", "--vars", "{land: 3}"])  # 3 lands between the two reads
        assert latest_version(project, "pinned") == pinned_at + 1
        read = f"select id, reference from {schema}.both order by reference, id"
        assert rows(project, read) == [(1, "first"), (2, "first"), (1, "second"), (2, "second")]
        assert offsets(project)["pinned__first"] == pinned_at
        assert offsets(project)["pinned__second"] == pinned_at

        run_dbt(["run", "-s", "both"])  # the next build reads the landed row, once per stream
        assert rows(project, read) == [
            *[(i, "first") for i in (1, 2, 3)],
            *[(i, "second") for i in (1, 2, 3)],
        ]

    def test_more_pending_commits_than_a_history_page_are_consumed_exactly(self, project):
        schema = project.test_schema
        project.run_sql(f"create table {schema}.busy (id int, v string) using delta")
        project.run_sql(f"insert into {schema}.busy values (1, 'a'), (2, 'b')")
        run_dbt(["run", "-s", "mirror", "audit"])
        built = offsets(project)["mirror__busy"]

        commits = 40
        statements = []
        for i in range(commits):
            if i % 4 == 3:
                statements.append(f"update {schema}.busy set v = 'u{i}' where id = 1")
            elif i % 8 == 6:
                statements.append(f"delete from {schema}.busy where id = {10 + i - 2}")
            else:
                statements.append(f"insert into {schema}.busy values ({10 + i}, 'i{i}')")
        run_in_one_session(project, *statements)
        assert latest_version(project, "busy") - built >= commits

        run_dbt(["run", "-s", "mirror", "audit"])
        source = rows(project, f"select id, v from {schema}.busy order by id")
        assert rows(project, f"select id, v from {schema}.mirror order by id") == source
        inserted = [(10 + i, f"i{i}") for i in range(commits) if i % 4 != 3 and i % 8 != 6]
        audited = rows(project, f"select id, v from {schema}.audit order by id")
        assert audited == [(1, "a"), (2, "b"), *inserted]
        assert offsets(project)["mirror__busy"] == latest_version(project, "busy")
        assert offsets(project)["audit__busy"] == latest_version(project, "busy")

    def test_a_short_log_retention_is_raised_with_the_file_retention(self, project):
        schema = project.test_schema
        project.run_sql(
            f"create table {schema}.retained (id int) using delta tblproperties ("
            "delta.logRetentionDuration = 'interval 2 days', "
            "delta.deletedFileRetentionDuration = 'interval 1 days')"
        )
        project.run_sql(f"insert into {schema}.retained values (1)")
        run_dbt(["run", "-s", "retained"])
        properties = table_properties(project, "retained")
        assert properties["delta.logRetentionDuration"] == "interval 14 days"
        assert properties["delta.deletedFileRetentionDuration"] == "interval 14 days"
