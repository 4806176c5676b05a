"""View streams under random changes, as dbt builds them: three Delta tables under a keyed view
(a 3-way join with a filter and computed columns) and a keyless one (the same plus a UNION ALL
branch joining a table to itself). Each round commits random inserts, updates, deletes and
MERGEs to random tables, then builds with two threads; after every build the apply_changes
mirror equals the keyed view, and the append log of the keyless view's changes, summed
(INSERT +1, DELETE -1), equals that view's rows. Spark evaluates the views themselves, so the
check does not share the change algebra it tests.

`make test` runs VIEW_FUZZ_ROUNDS=2 rounds from a fixed seed; `make fuzz` runs more from a
random one (VIEW_FUZZ_SEED).
"""

import os
import random
from collections import Counter
from pathlib import Path

from dbt.tests.util import run_dbt

from tests.functional.adapter.delta import DeltaProject, sources_yml

ROUNDS = int(os.environ.get("VIEW_FUZZ_ROUNDS", "2"))
SEED = int(os.environ.get("VIEW_FUZZ_SEED", "11"))
CDF = "using delta tblproperties (delta.enableChangeDataFeed = true)"
KEYED = """select a.k, a.n, b.n as bn, a.n * 10 + b.n as total
from {s}.a a join {s}.b b on a.k = b.k cross join {s}.c c where c.k = a.k and c.n >= 0"""
MULTI = KEYED + " union all select x.k, x.n, y.n, -1 from {s}.a x join {s}.a y on x.k = y.k + 1"
COLUMNS = "k, n, bn, total"
MODELS = {
    "keyed_mirror": (
        "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
        "unique_key='k') }}\n"
        "select * from {{ stream(source('shop', 'keyed'), unique_key='k') }}\n"
    ),
    "multi_log": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        f"select {COLUMNS}, metadata_action from {{{{ stream(source('shop', 'multi')) }}}}\n"
    ),
}


def random_change(rng: random.Random, schema: str, present: dict[str, set[int]]) -> str:
    """One statement on a random table; inserts only add keys the table lacks."""
    table = rng.choice("abc")
    key, value = rng.randrange(3), rng.randrange(-1, 3)
    name = f"{schema}.{table}"
    action = rng.choice(["insert", "update", "delete", "merge"])
    if action == "insert" and key not in present[table]:
        present[table].add(key)
        return f"insert into {name} values ({key}, {value})"
    if action == "delete":
        present[table].discard(key)
        return f"delete from {name} where k = {key}"
    if action == "merge":
        present[table].add(key)
        return (
            f"merge into {name} t using (select {key} as k, {value} as n) s on t.k = s.k "
            "when matched then update set n = s.n when not matched then insert *"
        )
    return f"update {name} set n = {value} where k = {key}"


class TestViewStreamsUnderRandomChanges(DeltaProject):
    def test_mirror_and_log_follow_the_views(self, project):
        schema = project.test_schema
        sql = project.run_sql
        rng = random.Random(SEED)
        present: dict[str, set[int]] = {t: set() for t in "abc"}
        for table in "abc":
            sql(f"create table {schema}.{table} (k int, n int) {CDF}")
        for _ in range(6):
            sql(random_change(rng, schema, present))
        sql(f"create view {schema}.keyed as {KEYED.format(s=schema)}")
        sql(f"create view {schema}.multi as {MULTI.format(s=schema)}")
        root = Path(project.project_root)
        (root / "models" / "sources.yml").write_text(sources_yml("shop", "keyed", "multi"))
        for name, text in MODELS.items():
            (root / "models" / f"{name}.sql").write_text(text)

        for round_ in range(ROUNDS + 1):
            if round_:
                for _ in range(rng.randrange(4, 9)):
                    sql(random_change(rng, schema, present))
            run_dbt(["run", "--threads", "2"])
            mirror = self.rows(project, f"select {COLUMNS} from {schema}.keyed_mirror")
            assert mirror == self.rows(project, f"select {COLUMNS} from {schema}.keyed"), round_
            log = sql(f"select {COLUMNS}, metadata_action from {schema}.multi_log", fetch="all")
            summed: Counter = Counter()
            for row in log:
                summed[tuple(row[:4])] += 1 if row[4] == "INSERT" else -1
            summed = Counter({row: n for row, n in summed.items() if n})  # a negative one stays
            assert summed == self.rows(project, f"select {COLUMNS} from {schema}.multi"), round_

    @staticmethod
    def rows(project, query: str) -> Counter:
        return Counter(tuple(row) for row in project.run_sql(query, fetch="all"))
