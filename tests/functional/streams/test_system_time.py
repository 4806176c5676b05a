"""for_system_time() replays a scripted history exactly (docs/concepts/contract.md, time
travel; the reference document's worked example).

The script inserts, updates, deletes, re-inserts a deleted key, makes a no-op update,
inserts a duplicate row and updates a row with a null column. Each of the four forms is asked
at every commit time, one microsecond before and after it, and compared with rows computed in
Python from the table's `VERSION AS OF` snapshots alone: AS OF t is the newest snapshot
committed at or before t, BEFORE t the newest strictly before t; FROM t1 TO t2 is AS OF t1
plus the rows each commit in (t1, t2) added, BETWEEN the same with t2 included.
"""

from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.travel.for_system_time import (
    SystemTimeRequest,
    system_time_sql,
)
from tests.functional.delta import DeltaProject, sources_yml

SCRIPT = (
    "insert into {t} values (1, 'a'), (2, 'b'), (3, null)",
    "update {t} set v = 'a2' where k = 1",
    "delete from {t} where k = 2",
    "insert into {t} values (2, 'b')",  # the deleted key again
    "update {t} set v = v where k = 1",  # a no-op update
    "insert into {t} values (2, 'b')",  # a duplicate row
    "delete from {t} where k = 1",
    "update {t} set v = 'c' where k = 3",  # a row with a null column ends
)
MICRO = timedelta(microseconds=1)
FMT = "%Y-%m-%d %H:%M:%S.%f"


def minus(a: Counter, b: Counter) -> Counter:
    return a - b


def values_of(versions: Counter) -> Counter:
    """The (k, v) rows of row versions (k, v, _sys_start, _sys_end), by count."""
    values: Counter = Counter()
    for row, n in versions.items():
        values[row[:2]] += n
    return values


class TestSystemTime(DeltaProject):
    def test_four_forms_at_every_commit_boundary(self, project):
        adapter = project.adapter
        name = "versions"
        table = f"{project.test_schema}.{name}"

        with adapter.connection_named("__system_time"):
            run = adapter.run_rows
            run(
                f"create table {table} (k int, v string) using delta "
                "tblproperties (delta.enableChangeDataFeed = true)"
            )
            for statement in SCRIPT:
                run(statement.format(t=table))
            history = {int(r["version"]): r["timestamp"] for r in run(f"describe history {table}")}
            states = {
                v: Counter(
                    (r["k"], r["v"]) for r in run(f"select * from {table} version as of {v}")
                )
                for v in history
            }
            pins: dict = {}
            now = datetime.now()
            read: dict[str, list] = {}

            def read_once(sql: str) -> list:
                """The table does not change while the questions are asked: each of its
                descriptions is read once, not once per question (about 0.3 s each)."""
                if sql not in read:
                    read[sql] = run(sql)
                return read[sql]

            def sql_of(form: str, *times: datetime) -> str:
                request = SystemTimeRequest(
                    project.test_schema, name, form, tuple(t.strftime(FMT) for t in times)
                )
                return system_time_sql(read_once, pins, now, request)

            def batch(questions: list[tuple]) -> list[Counter]:
                """Each question's row versions (k, v, _sys_start, _sys_end), asked in one
                statement: one Spark job instead of one per question, and one branch per
                distinct query (questions answered by one table state share it)."""
                queries = [sql_of(*question) for question in questions]
                distinct = list(dict.fromkeys(queries))
                branches = " union all ".join(
                    f"select {i} as _q, k, v, _sys_start, _sys_end from ({query})"
                    for i, query in enumerate(distinct)
                )
                rows: list[Counter] = [Counter() for _ in distinct]
                for r in run(branches):
                    rows[r["_q"]][(r["k"], r["v"], r["_sys_start"], r["_sys_end"])] += 1
                return [rows[distinct.index(query)] for query in queries]

            def ask(form: str, *times: datetime) -> Counter:
                return values_of(batch([(form, *times)])[0])

            def state(t: datetime, strictly: bool) -> Counter:
                done = [v for v, ts in history.items() if ts < t or (not strictly and ts == t)]
                return states[max(done)] if done else Counter()

            def added(low: datetime, high: datetime, closed: bool) -> Counter:
                total: Counter = Counter()
                for v, ts in history.items():
                    if low < ts < high or (closed and ts == high):
                        total += minus(states[v], states.get(v - 1, Counter()))
                return total

            start = history[0]
            probes = sorted({t + d for t in history.values() for d in (-MICRO, 0 * MICRO, MICRO)})
            probes = [t for t in probes if t >= start]
            as_of = batch([("as_of", t) for t in probes])
            # BETWEEN t AND t holds the rows AS OF t, but builds every row version where AS OF
            # reads the state as Delta does: both must give each row the same start and end
            commits = [t for t in probes if t in history.values()]
            exact = [rows for t, rows in zip(probes, as_of, strict=True) if t in commits]
            assert exact == batch([("between", t, t) for t in commits])
            later = [t for t in probes if t > start]
            before = batch([("before", t) for t in later])
            for t, rows in zip(probes, as_of, strict=True):
                assert values_of(rows) == state(t, strictly=False), ("as_of", t)
            for t, rows in zip(later, before, strict=True):
                assert values_of(rows) == state(t, strictly=True), ("before", t)

            pairs = list(zip(probes, probes[1:] + probes[-1:], strict=True))
            between = batch([("between", t1, t2) for t1, t2 in pairs])
            for (t1, t2), rows in zip(pairs, between, strict=True):
                expected = state(t1, strictly=False) + added(t1, t2, closed=True)
                assert values_of(rows) == expected, ("between", t1, t2)
            pairs = [(t1, t2) for t1, t2 in pairs if t1 > start]
            from_to = batch([("from_to", t1, t2) for t1, t2 in pairs])
            for (t1, t2), rows in zip(pairs, from_to, strict=True):
                expected = state(t1, strictly=False) + added(t1, t2, closed=False)
                assert values_of(rows) == (expected if t1 < t2 else Counter()), ("from_to", t1)

            # the re-inserted key has two versions; the first ended when it was deleted
            rows = run(
                system_time_sql(
                    run, pins, now,
                    SystemTimeRequest(project.test_schema, name, "between", (
                        start.strftime(FMT), history[max(history)].strftime(FMT))),
                )
            )  # fmt: skip
            key_2 = sorted((r["_sys_start"], r["_sys_end"]) for r in rows if r["k"] == 2)
            assert key_2 == [
                (history[1], history[3]),
                (history[4], None),
                (history[6], None),
            ]

            # a row with a null column keeps its period in both plans (AS OF reads the state
            # and joins its times by row value; BETWEEN builds every version)
            key_3 = [(history[1], history[8]), (history[8], None)]
            assert sorted((r["_sys_start"], r["_sys_end"]) for r in rows if r["k"] == 3) == key_3
            at_7 = run(sql_of("as_of", history[7]))
            assert [(r["_sys_start"], r["_sys_end"]) for r in at_7 if r["k"] == 3] == key_3[:1]

            # asking before the retention start fails, naming it
            with pytest.raises(StreamError, match="is before the retention start"):
                ask("as_of", start - MICRO)
            with pytest.raises(StreamError, match="is before the retention start"):
                ask("before", start)
            assert ask("from_to", start, start + MICRO) == state(start, strictly=False)

    def test_the_macros_in_a_model(self, project):
        schema = project.test_schema
        project.run_sql(
            f"create table {schema}.orders (id int) using delta "
            "tblproperties (delta.enableChangeDataFeed = true)"
        )
        project.run_sql(f"insert into {schema}.orders values (1)")
        root = Path(project.project_root)
        (root / "models" / "sources.yml").write_text(sources_yml("shop", "orders"))
        (root / "models" / "orders_now.sql").write_text(
            "{{ config(materialized='table') }}\n"
            "select id, _sys_start, _sys_end from {{ for_system_time(source('shop', 'orders'), "
            "as_of=retention_start(source('shop', 'orders'))) }}"
        )
        (root / "models" / "orders_view.sql").write_text(
            "{{ config(materialized='view') }}\n"
            "select * from {{ for_system_time(source('shop', 'orders'), "
            "as_of='2999-01-01 00:00:00') }}"
        )
        run_dbt(["run", "-s", "orders_now"])
        assert project.run_sql(f"select id from {schema}.orders_now", fetch="all") == []
        results = run_dbt(["run", "-s", "orders_view"], expect_pass=False)
        assert "for_system_time() cannot be used in a view" in results[0].message
