"""View streams under random changes, as dbt builds them (a differential test, hypothesis).

Three Delta tables sit under a keyed view (a 3-way join with a filter and computed columns)
and a keyless one (the same plus a UNION ALL branch joining a table to itself). Hypothesis
draws the batches: random inserts, updates, deletes and MERGEs on random tables. After every
build (two threads), the apply_changes mirror equals the keyed view, and the rows the append
log of the keyless view gained in that build are exactly the view's difference between the
previous build and this one (each value's count change, as INSERTs or DELETEs). Some builds
of the log fail (always the first batch's, then as drawn): such a build appends nothing and
moves none of the view stream's offsets, and the next one catches up. After the last batch's
build the registry loses that build's rows (a crash between the commit and the registry
append): the next build takes the view's offsets from the target's commit and reads nothing
twice. Spark evaluates the views themselves, so the check does not share the change algebra
it tests.

`make test` runs one fixed example written to reach every term of the change algebra
(Hypothesis would start from its simplest example, all inserts of key 0); `make fuzz` adds
VIEW_FUZZ_EXAMPLES examples of VIEW_FUZZ_ROUNDS batches drawn by Hypothesis, each on fresh
tables.
"""

import itertools
import os
from collections import Counter
from pathlib import Path

from dbt.tests.util import run_dbt
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

from tests.functional.delta import FAIL_IF_ASKED, DeltaProject

ROUNDS = int(os.environ.get("VIEW_FUZZ_ROUNDS", "2"))
EXAMPLES = int(os.environ.get("VIEW_FUZZ_EXAMPLES", "0"))
ACTIONS = ["insert", "update", "delete", "merge"]
EXAMPLE = itertools.count()
CDF = "using delta tblproperties (delta.enableChangeDataFeed = true)"
KEYED = """select a.k, a.n, b.n as bn, a.n * 10 + b.n as total
from {a} a join {b} b on a.k = b.k cross join {c} c where c.k = a.k and c.n >= 0"""
MULTI = KEYED + " union all select x.k, x.n, y.n, -1 from {a} x join {a} y on x.k = y.k + 1"
COLUMNS = "k, n, bn, total"
SOURCES = """version: 2
sources:
  - name: shop
    schema: "{{ target.schema }}"
    tables:
      - {name: keyed, identifier: "{{ var('keyed', 'keyed') }}"}
      - {name: multi, identifier: "{{ var('multi', 'multi') }}"}
"""
MODELS = {
    "keyed_mirror": (
        "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
        "unique_key='k', key_ranges=true) }}\n"
        "select * from {{ stream(source('shop', 'keyed'), unique_key='k', "
        "name='view_fuzz_keyed') }}\n"
    ),
    "multi_log": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append', "
        'key_ranges=true, pre_hook="{{ fail_if_asked() }}") }}\n'
        f"select {COLUMNS}, metadata_action, {{{{ var('batch', 0) }}}} as batch\n"
        "from {{ stream(source('shop', 'multi'), name='view_fuzz_multi') }}\n"
    ),
}

change = st.tuples(
    st.sampled_from("abc"),
    st.sampled_from(ACTIONS),
    st.integers(0, 2),  # key
    st.integers(-1, 2),  # value (negative values are filtered out of the views' c)
)
examples = st.tuples(
    st.lists(change, min_size=6, max_size=6),  # before the views exist
    st.lists(
        st.tuples(st.lists(change, min_size=4, max_size=8), st.booleans()),  # (batch, fails)
        min_size=ROUNDS,
        max_size=ROUNDS,
    ),
)


def fixed_example() -> tuple:
    """An example of the strategy's shape for `make test`, written to reach every term: a
    holds consecutive keys (so the self-join has rows) while b and c change too; the first
    batch fails, the second catches up."""
    setup = [("a", "insert", 0, 1), ("a", "insert", 1, 2), ("a", "insert", 2, 0)]
    setup += [("b", "insert", 0, 1), ("b", "insert", 1, 1), ("c", "insert", 0, 0)]
    setup += [("c", "insert", 1, 1)]
    first = [("b", "update", 1, 2), ("c", "merge", 2, 1), ("a", "delete", 2, 0)]
    first += [("a", "merge", 2, 2), ("b", "insert", 2, 0)]
    second = [("c", "update", 0, -1), ("b", "delete", 0, 0), ("a", "update", 1, 0)]
    second += [("a", "insert", 0, 2), ("c", "merge", 1, 2), ("b", "merge", 0, 1)]
    return setup, [(first, False), (second, False)]


def statement(drawn: tuple, tables: dict[str, str], present: dict[str, set[int]]) -> str:
    """One drawn change as SQL; an insert of a key the table holds becomes an update."""
    table, action, key, value = drawn
    name = tables[table]
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


class ViewFuzz:
    """One example: fresh tables and views, a full-refresh build, then the drawn batches."""

    def __init__(self, project) -> None:
        self.project = project
        n = next(EXAMPLE)
        schema = project.test_schema
        self.tables = {t: f"{schema}.{t}_{n}" for t in "abc"}
        self.views = {"keyed": f"keyed_{n}", "multi": f"multi_{n}"}
        self.present: dict[str, set[int]] = {t: set() for t in "abc"}
        self.batch = 0
        self.multi: Counter = Counter()  # the keyless view's rows at the last build

    def rows(self, query: str) -> Counter:
        return Counter(tuple(row) for row in self.project.run_sql(query, fetch="all"))

    def start(self, setup: list[tuple]) -> None:
        sql, schema = self.project.run_sql, self.project.test_schema
        for table in self.tables.values():
            sql(f"create table {table} (k int, n int) {CDF}")
        self.apply(setup)
        sql(f"create view {schema}.{self.views['keyed']} as {KEYED.format(**self.tables)}")
        sql(f"create view {schema}.{self.views['multi']} as {MULTI.format(**self.tables)}")
        self.build(full_refresh=True)

    def apply(self, batch: list[tuple]) -> None:
        for drawn in batch:
            self.project.run_sql(statement(drawn, self.tables, self.present))

    def build(
        self, full_refresh: bool = False, failing: bool = False, lose_registry: bool = False
    ) -> None:
        self.batch += 1
        variables = str({**self.views, "batch": self.batch, "fail": failing})
        offsets = self.offsets() if failing else Counter()
        args = ["run", "--threads", "2", "--vars", variables, *["--full-refresh"] * full_refresh]
        run_dbt(args, expect_pass=not failing)
        schema = self.project.test_schema
        keyed = self.rows(f"select {COLUMNS} from {schema}.{self.views['keyed']}")
        assert self.rows(f"select {COLUMNS} from {schema}.keyed_mirror") == keyed, self.batch
        multi = self.rows(f"select {COLUMNS} from {schema}.{self.views['multi']}")
        logged = self.rows(
            f"select metadata_action, {COLUMNS} from {schema}.multi_log where batch = {self.batch}"
        )
        if failing:
            assert logged == Counter() and self.offsets() == offsets, self.batch
            return
        assert logged == self.signed(multi - self.multi, self.multi - multi), self.batch
        self.multi = multi
        if lose_registry:  # as a crash after the commit, before the registry append, would
            [[newest]] = self.project.run_sql(
                f"select max(txn_version) from {schema}.dbt_streams_log "
                "where name = 'view_fuzz_multi'",
                fetch="all",
            )
            committed = self.offsets()
            self.project.run_sql(
                f"delete from {schema}.dbt_streams_log "
                f"where name like 'view_fuzz_multi%' and txn_version = {newest}"
            )
            assert self.offsets() != committed  # the registry is behind the target now

    def offsets(self) -> Counter:
        """The log's view stream and table streams as the registry holds them."""
        return self.rows(
            f"select name, offset_version, source_id from {self.project.test_schema}.dbt_streams "
            "where name like 'view_fuzz_multi%'"
        )

    @staticmethod
    def signed(gained: Counter, lost: Counter) -> Counter:
        """The log rows a change of the view's rows must give: INSERTs and DELETEs by count."""
        rows = Counter({("INSERT", *row): n for row, n in gained.items()})
        return rows + Counter({("DELETE", *row): n for row, n in lost.items()})


class TestViewStreamsUnderRandomChanges(DeltaProject):
    def test_mirror_and_log_follow_the_views(self, project):
        macros = Path(project.project_root) / "macros"
        macros.mkdir(exist_ok=True)
        (macros / "fail_if_asked.sql").write_text(FAIL_IF_ASKED)
        models = Path(project.project_root) / "models"
        (models / "sources.yml").write_text(SOURCES)
        for name, text in MODELS.items():
            (models / f"{name}.sql").write_text(text)

        @settings(
            max_examples=max(EXAMPLES, 1),
            phases=[Phase.explicit, *([Phase.generate, Phase.shrink] if EXAMPLES else [])],
        )
        @given(examples)
        @example(fixed_example())
        def one_example(drawn):
            setup, batches = drawn
            fuzz = ViewFuzz(project)
            fuzz.start(setup)
            for index, (batch, fails) in enumerate(batches):
                fuzz.apply(batch)
                last = index == len(batches) - 1
                fuzz.build(failing=(fails or index == 0) and not last, lose_registry=last)
            fuzz.build()  # offsets from the target's last commit: nothing is read twice

        one_example()
