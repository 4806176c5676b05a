"""Every column type a Delta table can hold goes through netting: keyed and keyless streams.

Maps and variants have no ordering in Spark, so `<=>` and GROUP BY refuse them; the streams
compare such rows on a canonical form (map entries in key order, a variant's JSON text). Each
round below changes the source through Spark SQL, runs dbt once, and checks the targets' real
rows against the source's state before and after the round, compared as parsed JSON: maps
as dicts (entry order aside), NaN as "NaN", -0.0 equal to 0.0, decimals exactly.
"""

import json
import os
from decimal import Decimal

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.spark_streams.versions import installed_spark
from tests.conftest import THRIFT_ENV
from tests.functional.delta import DeltaProject, sources_yml

COLUMNS = (
    "id int, big bigint, s string, bin binary, flag boolean, dec decimal(12,3), dbl double, "
    "flt float, d date, ts timestamp, tsn timestamp_ntz, arr array<int>, "
    "st struct<a:int,b:string>, m map<string,int>, mi map<int,string>, v variant, "
    "am array<map<string,int>>, sm struct<m:map<string,int>,v:variant,x:double>"
)
NAMES = tuple(column.split()[0] for column in COLUMNS.split(", ") if " " in column)

# Spark 4.0 cannot read VARIANT columns where deletion vectors mark rows (session/jvm/
# versions.py): there the mirror goes without them, as its error tells a user to.
MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id'%s) }}
select * from {{ stream(source('typed', 'typed'), unique_key='id') }}
""" % (
    ", tblproperties={'delta.enableDeletionVectors': 'false'}"
    if installed_spark().minor_line == "4.0"
    else ""
)

KEYED_LOG = """
{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select * from {{ stream(source('typed', 'typed'), unique_key='id') }}
"""

KEYLESS_LOG = """
{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select * from {{ stream(source('typed', 'typed')) }}
"""


def row(
    id_: int,
    s: str = "'one'",
    m: str = "map('a', 1, 'b', 2)",
    v: str = """parse_json('{"x": 1, "y": [true, null]}')""",
    dbl: str = "double('NaN')",
    sm: str = """named_struct('m', map('p', 1, 'q', 2), 'v', parse_json('{"b": 2, "a": 1}'),
                 'x', double('NaN'))""",
    am: str = "array(map('k', 1, 'l', 2), map())",
    bin_: str = "X'01FF'",
) -> str:
    """A SELECT list for one source row; the arguments are SQL expressions."""
    return (
        f"select {id_}, 10000000000 + {id_}, {s}, {bin_}, true, 1.500BD + {id_}, {dbl}, "
        "float(-0.0), date'2024-01-01', timestamp'2024-01-01 10:00:00', "
        "timestamp_ntz'2024-01-01 10:00:00.123456', array(1, null, 3), "
        f"named_struct('a', {id_}, 'b', 'x'), {m}, map(2, 'y', 1, 'x'), {v}, {am}, {sm}"
    )


NULLS = "select 5, " + ", ".join("null" for _ in NAMES[1:])


def sql(project, statement: str) -> list:
    """Run a statement; braces are doubled because dbt's run_sql formats the text."""
    return project.run_sql(statement.replace("{", "{{").replace("}", "}}"), fetch="all")


def as_json(text: str) -> dict:
    return json.loads(text, parse_float=Decimal)


def values() -> str:
    """The source's columns of a row as one JSON text: maps and variants are not comparable
    in SQL, their parsed JSON is in Python."""
    fields = ", ".join(f"'{name}', {name}" for name in NAMES)
    return f"to_json(named_struct({fields}))"


def state(project, table: str) -> dict[int, dict]:
    """The table's rows as parsed JSON of the source's columns, by id."""
    rows = sql(project, f"select id, {values()} from {project.test_schema}.{table}")
    return {id_: as_json(text) for id_, text in rows}


def log(project, table: str) -> list[tuple]:
    """(commit version, id, action, isupdate, row id, values) of a log target."""
    rows = sql(
        project,
        f"select metadata_commit_version, id, metadata_action, metadata_isupdate, "
        f"metadata_row_id, {values()} from {project.test_schema}.{table}",
    )
    return sorted((*row[:5], as_json(row[5])) for row in rows)


def latest_version(project) -> int:
    [latest] = sql(project, f"describe history {project.test_schema}.typed limit 1")
    return latest[0]


def round_rows(rows: list[tuple], after: int, upto: int) -> list[tuple]:
    """The log rows of the changes committed in (after, upto]: one round."""
    return [row[1:] for row in rows if after < row[0] <= upto]


def check_round(rows: list[tuple], before: dict, after: dict, expected: list[tuple]) -> None:
    """One round of a log: the (id, action, isupdate) expected, DELETEs carry the value
    before the round, INSERTs the value after it, and an update's two halves one row id."""
    assert sorted(r[:3] for r in rows) == sorted(expected)
    for id_, action, _isupdate, _, found in rows:
        assert found == (before if action == "DELETE" else after)[id_]
    updates = [r for r in rows if r[2]]
    for half in updates:
        assert {r[3] for r in updates if r[0] == half[0]} == {half[3]}


def expected(updated: tuple, deleted: tuple, inserted: tuple, keyed: bool) -> list[tuple]:
    """A round's (id, action, isupdate): an update is a DELETE and an INSERT, marked as an
    update only on a keyed stream."""
    halves = [(id_, action, keyed) for id_ in updated for action in ("DELETE", "INSERT")]
    return (
        halves + [(i, "DELETE", False) for i in deleted] + [(i, "INSERT", False) for i in inserted]
    )


def check_logs(keyed: list, keyless: list, versions: list, states: list) -> None:
    """Both logs, round by round: the initial rows, then each round's net change."""
    initial = [(i, "INSERT", False) for i in (1, 2, 3, 4)]
    for rows in (keyed, keyless):
        assert sorted(r[1:4] for r in rows if r[0] == versions[0]) == initial
    rounds = [((1, 2), (4,), (5,)), ((2,), (3, 5), (4,))]
    for number, (updated, deleted, inserted) in enumerate(rounds, start=1):
        for rows, is_keyed in ((keyed, True), (keyless, False)):
            check_round(
                round_rows(rows, versions[number - 1], versions[number]),
                states[number - 1],
                states[number],
                expected(updated, deleted, inserted, is_keyed),
            )


def check_row_ids(keyed: list[tuple], keyless: list[tuple]) -> None:
    """A keyed row id is the key's; a keyless one is the value's, so equal rows share it:
    row 4 deleted and re-inserted with its maps in another order, row 3 read with -0.0 and
    deleted as 0.0, row 1 with NaN."""
    for id_ in (1, 2, 3, 4, 5):
        assert len({r[4] for r in keyed if r[1] == id_}) == 1
    by_value: dict[str, set] = {}
    for row in keyless:
        by_value.setdefault(json.dumps(row[5], sort_keys=True, default=str), set()).add(row[4])
    assert all(len(row_ids) == 1 for row_ids in by_value.values())
    for id_ in (3, 4):
        assert len({r[4] for r in keyless if r[1] == id_}) == 1


def change_round_1(project, table: str) -> None:
    """Real updates (a map value, a variant, a nested map); a no-op update rewriting maps and
    variants with the same entries in another order and -0.0 as 0.0; a delete; an insert of
    a row of nulls."""
    for statement in (
        f"update {table} set s = 'uno', m = map('a', 1, 'b', 3) where id = 1",
        f"""update {table} set v = parse_json('{{"x": 2}}'),
            sm = named_struct('m', map('p', 1), 'v', sm.v, 'x', sm.x) where id = 2""",
        f"""update {table} set m = map('b', 2, 'a', 1), dbl = 0.0D,
            v = parse_json('{{"y": [true, null], "x": 1}}'),
            sm = named_struct('m', map('q', 2, 'p', 1), 'v', parse_json('{{"a": 1, "b": 2}}'),
                              'x', double('NaN')),
            am = array(map('l', 2, 'k', 1), map()) where id = 3""",
        f"delete from {table} where id = 4",
        f"insert into {table} {NULLS}",
    ):
        sql(project, statement)


def change_round_2(project, table: str) -> None:
    """Row 4 comes back with its first values, maps and variants written in another order;
    row 1 changes and changes back (nets out); row 2's variant changes; rows 3 and 5 go."""
    again = row(
        4,
        s="'four'",
        m="map('b', 2, 'a', 1)",
        v="""parse_json('{"y": [true, null], "x": 1}')""",
        sm="""named_struct('m', map('q', 2, 'p', 1), 'v', parse_json('{"a": 1, "b": 2}'),
                           'x', double('NaN'))""",
    )
    for statement in (
        f"insert into {table} {again}",
        f"update {table} set bin = X'00' where id = 1",
        f"update {table} set bin = X'01FF' where id = 1",
        f"""update {table} set v = parse_json('{{"x": 3}}') where id = 2""",
        f"delete from {table} where id in (3, 5)",
    ):
        sql(project, statement)


class TestEveryColumnType(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("typed", "typed"),
            "mirror.sql": MIRROR,
            "keyed_log.sql": KEYED_LOG,
            "keyless_log.sql": KEYLESS_LOG,
        }

    def test_netting_on_every_type(self, project):
        table = f"{project.test_schema}.typed"
        sql(
            project,
            f"create table {table} ({COLUMNS}) using delta "
            "tblproperties (delta.enableChangeDataFeed = true, "
            # The retention consumers extend to, so no build commits to the source.
            "delta.deletedFileRetentionDuration = 'interval 14 days')",
        )
        first = (row(1), row(2, s="'two'"), row(3, dbl="-0.0D"), row(4, s="'four'"))
        sql(project, f"insert into {table} {' union all '.join(first)}")
        states, versions = [state(project, "typed")], [latest_version(project)]
        if os.environ.get(THRIFT_ENV):  # HiveServer2 has no VARIANT type for a result
            results = run_dbt(["run"], expect_pass=False)
            said = [" ".join(str(r.message).split()) for r in results]
            assert len(said) == 3, said
            assert all("The Spark Thrift Server at 127.0.0.1:" in m for m in said), said
            assert all("cannot return a VARIANT column" in m for m in said), said
            return
        run_dbt(["run"])
        assert state(project, "mirror") == states[0]

        for number, change in enumerate((change_round_1, change_round_2), start=1):
            change(project, table)
            states.append(state(project, "typed"))
            versions.append(latest_version(project))
            run_dbt(["run"])
            assert state(project, "mirror") == states[number]

        keyed, keyless = log(project, "keyed_log"), log(project, "keyless_log")
        check_logs(keyed, keyless, versions, states)
        check_row_ids(keyed, keyless)
