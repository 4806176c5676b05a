"""The worked examples of the stream reference (001, Beispiel 1 and 2) as dbt models.

The source tables change through Spark SQL DML between dbt runs; peek models (tables rebuilt
on demand) show what a stream holds without consuming it.
"""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, table_properties

SOURCES = """
version: 2
sources:
  - name: gym
    schema: "{{ target.schema }}"
    tables: [{name: members}, {name: signup}, {name: t}]
"""

PEEK = """
{{{{ config(materialized='table') }}}}
select * from {{{{ stream(source('gym', '{source}'), name='{name}', unique_key='id',
                          mode='{mode}') }}}}
"""


def peek(project, model: str, columns: str = "id, name") -> list[tuple]:
    """Rebuild a peek model; its rows as (columns..., action, isupdate, row id), ordered."""
    run_dbt(["run", "--select", model])
    rows = project.run_sql(
        f"select {columns}, metadata_action, metadata_isupdate, metadata_row_id "
        f"from {project.test_schema}.{model} order by metadata_action desc, id",
        fetch="all",
    )
    return [tuple(row) for row in rows]


def member_check(project) -> list[tuple]:
    """The member_check stream's pending rows, with the fee."""
    return peek(project, "member_check_peek", columns="id, name, fee")


def changes(rows: list[tuple]) -> list[tuple]:
    """Rows without the row id: (id, name, fee, action, isupdate)."""
    return [tuple(row[:5]) for row in rows]


class TestBeispiel1Members(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES,
            "member_check_peek.sql": PEEK.format(
                source="members", name="member_check", mode="standard"
            ),
            "members_prod.sql": """
{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select id, name, fee
from {{ stream(source('gym', 'members'), name='member_check', unique_key='id') }}
where metadata_action = 'INSERT'
""",
        }

    def test_member_check(self, project):
        schema = project.test_schema
        project.run_sql(
            f"create table {schema}.members (id int not null, name string, fee int) using delta"
        )
        project.run_sql(f"create table {schema}.signup (id int, dt date) using delta")
        project.run_sql(
            f"insert into {schema}.members values (1, 'Joe', 0), (2, 'Jane', 0), "
            "(3, 'George', 0), (4, 'Betty', 0), (5, 'Sally', 0)"
        )
        project.run_sql(
            f"insert into {schema}.signup values (1, date'2018-01-01'), (2, date'2018-02-15'), "
            "(3, date'2018-05-01'), (4, date'2018-07-16'), (5, date'2018-08-21')"
        )
        inserted = [
            (1, "Joe", 0, "INSERT", False),
            (2, "Jane", 0, "INSERT", False),
            (3, "George", 0, "INSERT", False),
            (4, "Betty", 0, "INSERT", False),
            (5, "Sally", 0, "INSERT", False),
        ]
        assert changes(member_check(project)) == inserted

        project.run_sql(
            f"merge into {schema}.members m using (select id, dt from {schema}.signup s "
            "where datediff(s.dt, date'2018-08-15') < -30) s on m.id = s.id "
            "when matched then update set m.fee = 90"
        )
        assert changes(member_check(project)) == [
            (1, "Joe", 90, "INSERT", False),
            (2, "Jane", 90, "INSERT", False),
            (3, "George", 90, "INSERT", False),
            (4, "Betty", 0, "INSERT", False),
            (5, "Sally", 0, "INSERT", False),
        ]

        run_dbt(["run", "--select", "members_prod"])
        prod = project.run_sql(
            f"select id, name, fee from {schema}.members_prod order by id", fetch="all"
        )
        assert [tuple(r) for r in prod] == [
            (1, "Joe", 90),
            (2, "Jane", 90),
            (3, "George", 90),
            (4, "Betty", 0),
            (5, "Sally", 0),
        ]
        assert member_check(project) == []

        project.run_sql(f"update {schema}.members set fee = fee + 15 where fee > 0")
        rows = member_check(project)
        assert changes(rows) == [
            (1, "Joe", 105, "INSERT", True),
            (2, "Jane", 105, "INSERT", True),
            (3, "George", 105, "INSERT", True),
            (1, "Joe", 90, "DELETE", True),
            (2, "Jane", 90, "DELETE", True),
            (3, "George", 90, "DELETE", True),
        ]
        assert [r[5] for r in rows[:3]] == [r[5] for r in rows[3:]]
        assert len({r[5] for r in rows}) == 3

        run_dbt(["run", "--select", "members_prod"])
        prod = project.run_sql(
            f"select id, fee from {schema}.members_prod where fee = 105 order by id", fetch="all"
        )
        assert [tuple(r) for r in prod] == [(1, 105), (2, 105), (3, 105)]
        assert member_check(project) == []
        [(offset,)] = project.run_sql(
            f"select offset_version from {schema}.dbt_streams where name = 'member_check'",
            fetch="all",
        )
        # create, insert, merge, the first consuming build raising the retention to 14 days
        # (max_data_extension_time), update: the update's commit
        assert offset == 4
        assert (
            table_properties(project, "members")["delta.deletedFileRetentionDuration"]
            == "interval 14 days"
        )


T2 = """
{{{{ config(materialized='stream_incremental', incremental_strategy='append', unique_key='id') }}}}
select id, name, '{label}' as stream_type
from {{{{ stream(source('gym', 't'), name='{name}', mode='{mode}') }}}}
"""


class TestBeispiel2StandardAndAppendOnly(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES,
            "delta_s_peek.sql": PEEK.format(source="t", name="delta_s", mode="standard"),
            "append_only_s_peek.sql": PEEK.format(
                source="t", name="append_only_s", mode="append_only"
            ),
            "t2_delta.sql": T2.format(label="delta stream", name="delta_s", mode="standard"),
            "t2_append_only.sql": T2.format(
                label="append_only stream", name="append_only_s", mode="append_only"
            ),
        }

    def test_standard_versus_append_only(self, project):
        schema = project.test_schema
        project.run_sql(f"create table {schema}.t (id int, name string) using delta")
        run_dbt(["run", "--select", "t2_delta", "t2_append_only"])  # streams start on empty t
        for row in ("0, 'charlie brown'", "1, 'lucy'", "2, 'linus'"):
            project.run_sql(f"insert into {schema}.t values ({row})")
        project.run_sql(f"delete from {schema}.t where id = 0")

        standard = peek(project, "delta_s_peek")
        appended = peek(project, "append_only_s_peek")
        assert [r[:4] for r in standard] == [
            (1, "lucy", "INSERT", False),
            (2, "linus", "INSERT", False),
        ]
        assert [r[:4] for r in appended] == [
            (0, "charlie brown", "INSERT", False),
            (1, "lucy", "INSERT", False),
            (2, "linus", "INSERT", False),
        ]
        assert [r[4] for r in standard] == [r[4] for r in appended[1:]]

        run_dbt(["run", "--select", "t2_delta", "t2_append_only"])
        t2 = project.run_sql(
            f"select id, name, stream_type from {schema}.t2_delta union all "
            f"select id, name, stream_type from {schema}.t2_append_only order by 3, 1",
            fetch="all",
        )
        assert [tuple(r) for r in t2] == [
            (0, "charlie brown", "append_only stream"),
            (1, "lucy", "append_only stream"),
            (2, "linus", "append_only stream"),
            (1, "lucy", "delta stream"),
            (2, "linus", "delta stream"),
        ]

        project.run_sql(f"update {schema}.t set name = 'sally' where name = 'linus'")
        standard = peek(project, "delta_s_peek")
        assert [r[:4] for r in standard] == [
            (2, "sally", "INSERT", True),
            (2, "linus", "DELETE", True),
        ]
        assert standard[0][4] == standard[1][4]
        assert peek(project, "append_only_s_peek") == []
