"""Differential fuzz: streams against a model of the source kept in Python.

Hypothesis draws sequences of DML (inserts, updates including key changes and no-op updates,
deletes, MERGEs, overwrites, nulls, duplicate rows) interleaved with dbt builds, some of them
made to fail. After every build each model that built must agree with the Python model:

- `mirror` (apply_changes on a keyed stream) equals the source;
- `keyed_log` (append of a keyed standard stream) holds, for this build, exactly the diff of the
  source between the last consumed snapshot and now, and replaying it gives the source;
- `bag_log` (append of a keyless stream on a table with duplicate rows) likewise, by count.

A model whose build failed must be unchanged, and its next build consumes everything since.
`make fuzz` runs its few explicit examples and many random ones (`make test` leaves it out).
"""

import itertools
from collections import Counter
from dataclasses import dataclass, field

import pytest
from dbt.tests.util import run_dbt
from hypothesis import example as example_
from hypothesis import given as given_
from hypothesis import strategies as st

from tests.functional.delta import DeltaProject

MODELS = ("mirror", "keyed_log", "bag_log")
TABLES = itertools.count()
Row = tuple  # (a, b)

SOURCES = """
version: 2
sources:
  - name: fuzz
    schema: "{{ target.schema }}"
    tables:
      - {name: src, identifier: "{{ var('src', 'src') }}"}
      - {name: bag, identifier: "{{ var('bag', 'bag') }}"}
"""

FAIL_IF_ASKED = """
{#- A missing table fails at analysis, which spark.sql() runs eagerly; a failing SELECT
    expression would only fail when its rows were fetched, and hooks fetch nothing. -#}
{% macro fail_if_asked() %}
  {%- if this.name in var('fail', []) -%} select * from injected_failure_no_such_table
  {%- else -%} select 1 {%- endif -%}
{% endmacro %}
"""

# key_ranges: every build's MERGE names the change set's key ranges (by default only a large
# target's would), over files of at most five rows, so skipped files are part of every example.
MIRROR = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
            unique_key='k', key_ranges=true, file_rows=5, pre_hook="{{ fail_if_asked() }}") }}
select * from {{ stream(source('fuzz', 'src'), name='fuzz_mirror') }}
"""

KEYED_LOG = """
{{ config(materialized='stream_incremental', incremental_strategy='append',
            pre_hook="{{ fail_if_asked() }}") }}
select *, {{ var('batch', 0) }} as batch
from {{ stream(source('fuzz', 'src'), name='fuzz_keyed_log', unique_key='k') }}
"""

BAG_LOG = """
{{ config(materialized='stream_incremental', incremental_strategy='append',
            pre_hook="{{ fail_if_asked() }}") }}
select *, {{ var('batch', 0) }} as batch
from {{ stream(source('fuzz', 'bag'), name='fuzz_bag_log') }}
"""


@dataclass
class Source:
    """What the source tables hold, kept by applying each statement in Python too."""

    keyed: dict[int, Row] = field(default_factory=dict)
    bag: Counter = field(default_factory=Counter)
    next_key: int = 1

    def new_key(self) -> int:
        self.next_key += 1
        return self.next_key


def literal(value: object) -> str:
    if value is None:
        return "null"
    return f"'{value}'" if isinstance(value, str) else str(value)


def values(rows: list[tuple]) -> str:
    return ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)


texts = st.sampled_from(["x", "y", "z", None])
numbers = st.one_of(st.none(), st.integers(0, 3))
pairs = st.tuples(texts, numbers)


@dataclass(frozen=True)
class Statement:
    """One DML statement: its SQL (for a schema and table names) and its effect on the model."""

    kind: str
    args: tuple

    def apply(self, project, names: dict[str, str], model: Source) -> None:
        getattr(self, "_" + self.kind)(project.run_sql, names, model, *self.args)

    @staticmethod
    def _insert(run, names, model, rows):
        keyed = [(model.new_key(), a, b) for a, b in rows]
        model.keyed.update({k: (a, b) for k, a, b in keyed})
        run(f"insert into {names['src']} values {values(keyed)}")

    @staticmethod
    def _update(run, names, model, modulus, remainder, a, b):
        for k in [k for k in model.keyed if k % modulus == remainder]:
            model.keyed[k] = (a, b)
        run(
            f"update {names['src']} set a = {literal(a)}, b = {literal(b)} "
            f"where k % {modulus} = {remainder}"
        )

    @staticmethod
    def _rekey(run, names, model, modulus, remainder):
        shift = 1000 * model.new_key()
        for k in [k for k in model.keyed if k % modulus == remainder]:
            model.keyed[k + shift] = model.keyed.pop(k)
        run(f"update {names['src']} set k = k + {shift} where k % {modulus} = {remainder}")

    @staticmethod
    def _delete(run, names, model, modulus, remainder):
        for k in [k for k in model.keyed if k % modulus == remainder]:
            del model.keyed[k]
        run(f"delete from {names['src']} where k % {modulus} = {remainder}")

    @staticmethod
    def _merge(run, names, model, existing, fresh):
        """Upsert by key; a matched source row whose `a` is null deletes instead."""
        keys = sorted(model.keyed)
        matched = {keys[i % len(keys)]: (a, b) for i, (a, b) in enumerate(existing) if keys}
        rows = [(k, a, b) for k, (a, b) in matched.items()]
        rows += [(model.new_key(), a, b) for a, b in fresh]
        for k, a, b in rows:
            if k in model.keyed and a is None:
                del model.keyed[k]
            else:
                model.keyed[k] = (a, b)
        if not rows:
            return
        run(
            f"merge into {names['src']} t using (select * from values {values(rows)} "
            "as s(k, a, b)) s on t.k = s.k "
            "when matched and s.a is null then delete "
            "when matched then update set * when not matched then insert *"
        )

    @staticmethod
    def _overwrite(run, names, model, keep, rows):
        kept = [(k, "x", b) for k, (_, b) in list(model.keyed.items())[:keep]]
        new = kept + [(model.new_key(), a, b) for a, b in rows]
        model.keyed = {k: (a, b) for k, a, b in new}
        if new:
            run(f"insert overwrite {names['src']} values {values(new)}")
        else:
            run(f"delete from {names['src']}")

    @staticmethod
    def _bag_insert(run, names, model, rows):
        model.bag.update(rows)
        if rows:
            run(f"insert into {names['bag']} values {values(rows)}")

    @staticmethod
    def _bag_update(run, names, model, a):
        updated: Counter = Counter()
        for (ra, rb), count in model.bag.items():
            updated[(ra, (rb or 0) + 1) if ra == a else (ra, rb)] += count
        model.bag = updated
        run(f"update {names['bag']} set b = coalesce(b, 0) + 1 where a = {literal(a)}")

    @staticmethod
    def _bag_delete(run, names, model, a):
        for row in [row for row in model.bag if row[0] == a]:
            del model.bag[row]
        run(f"delete from {names['bag']} where a = {literal(a)}")


selector = st.tuples(st.integers(2, 4), st.integers(0, 3))
statements = st.one_of(
    st.lists(pairs, min_size=1, max_size=4).map(lambda r: Statement("insert", (r,))),
    st.tuples(selector, pairs).map(lambda s: Statement("update", (*s[0], *s[1]))),
    selector.map(lambda s: Statement("rekey", s)),
    selector.map(lambda s: Statement("delete", s)),
    st.tuples(st.lists(pairs, max_size=3), st.lists(pairs, max_size=2)).map(
        lambda m: Statement("merge", m)
    ),
    st.tuples(st.integers(0, 2), st.lists(pairs, max_size=3)).map(
        lambda o: Statement("overwrite", o)
    ),
    st.lists(pairs, min_size=1, max_size=4).map(lambda r: Statement("bag_insert", (r + r[:1],))),
    st.sampled_from(["x", "y"]).map(lambda a: Statement("bag_update", (a,))),
    st.sampled_from(["x", "z"]).map(lambda a: Statement("bag_delete", (a,))),
)
steps = st.lists(
    st.tuples(st.lists(statements, max_size=4), st.frozensets(st.sampled_from(MODELS))),
    min_size=1,
    max_size=3,
)


# A range of appends only (the mirror's INSERT path, streams/delta/appends.py), one of deletes only
# (its delete-only MERGE), then a key deleted and appended again beside an update (MERGE),
# every model building.
APPENDS_THEN_DELETES_THEN_MIXED = [
    ([Statement("insert", ([("x", 1), ("y", None)],)), Statement("insert", ([("z", 2)],))],
     frozenset()),
    ([Statement("delete", (2, 0))], frozenset()),
    ([Statement("insert", ([("x", 3)],)), Statement("update", (3, 1, "y", 0))], frozenset()),
]  # fmt: skip


# A table's row in read_all without a log's columns.
NO_LOG = "null as metadata_action, null as metadata_isupdate, null as batch"


def keyed_diff(old: dict[int, Row], new: dict[int, Row]) -> Counter:
    """(action, isupdate, k, a, b) of the minimal change from old to new, by key."""
    diff: Counter = Counter()
    for k in old.keys() | new.keys():
        before, after = old.get(k), new.get(k)
        if before == after:
            continue
        update = before is not None and after is not None
        if before is not None:
            diff[("DELETE", update, k, *before)] += 1
        if after is not None:
            diff[("INSERT", update, k, *after)] += 1
    return diff


def bag_diff(old: Counter, new: Counter) -> Counter:
    diff: Counter = Counter()
    for row, count in (old - new).items():
        diff[("DELETE", False, *row)] += count
    for row, count in (new - old).items():
        diff[("INSERT", False, *row)] += count
    return diff


class Fuzz:
    """One example: fresh source tables, a full-refresh build, then the drawn steps."""

    def __init__(self, project) -> None:
        self.project = project
        n = next(TABLES)
        schema = project.test_schema
        self.ids = {"src": f"src_{n}", "bag": f"bag_{n}"}
        self.names = {key: f"{schema}.{table}" for key, table in self.ids.items()}
        self.model = Source()
        self.batch = 0
        self.consumed: dict[str, object] = {}

    def rows(self, sql: str) -> list[tuple]:
        return [tuple(row) for row in self.project.run_sql(sql, fetch="all")]

    def start(self) -> None:
        self.project.run_sql(
            f"create table {self.names['src']} (k int, a string, b int) using delta"
        )
        self.project.run_sql(f"create table {self.names['bag']} (a string, b int) using delta")
        self.build(frozenset(), full_refresh=True)

    def build(self, failing: frozenset, full_refresh: bool = False) -> None:
        self.batch += 1
        args = ["run", "--vars", str({**self.ids, "batch": self.batch, "fail": sorted(failing)})]
        full = ["--full-refresh"] if full_refresh else []
        results = run_dbt(args + full, expect_pass=not failing)
        status = {result.node.name: str(result.status) for result in results.results}
        assert status == {m: "error" if m in failing else "success" for m in MODELS}, status
        tables = self.read_all()
        source = tables["src"]
        assert {k: (a, b) for k, a, b, *_ in source} == self.model.keyed
        for model in MODELS:
            if model not in failing:
                self.check(model, tables, full_refresh)
                self.consumed[model] = self.snapshot(model)
            elif model != "mirror":
                assert self.batch not in {row[5] for row in tables[model]}

    def read_all(self) -> dict[str, list[tuple]]:
        """The source and every target, in one statement (one Spark job), each row as
        (k, a, b, action, isupdate, batch) with NULL where a table has no such column."""
        schema = self.project.test_schema
        parts = {
            "src": f"select k, a, b, {NO_LOG} from {self.names['src']}",
            "mirror": f"select k, a, b, {NO_LOG} from {schema}.mirror",
            "keyed_log": "select k, a, b, metadata_action, metadata_isupdate, batch "
            f"from {schema}.keyed_log",
            "bag_log": "select null as k, a, b, metadata_action, metadata_isupdate, batch "
            f"from {schema}.bag_log",
        }
        union = " union all ".join(
            f"select '{name}' as _t, * from ({sql})" for name, sql in parts.items()
        )
        tables: dict[str, list[tuple]] = {name: [] for name in parts}
        for row in self.rows(union):
            tables[row[0]].append(row[1:])
        return tables

    def snapshot(self, model: str) -> object:
        return Counter(self.model.bag) if model == "bag_log" else dict(self.model.keyed)

    def check(self, model: str, tables: dict[str, list[tuple]], full_refresh: bool) -> None:
        """The model's rows against the Python model (`tables`: read_all's)."""
        if model == "mirror":
            mirror = [row[:3] for row in tables["mirror"]]
            assert sorted(mirror, key=str) == sorted([r[:3] for r in tables["src"]], key=str)
            return
        log = tables[model]
        if model == "keyed_log":
            batch = Counter((r[3], r[4], r[0], r[1], r[2]) for r in log if r[5] == self.batch)
        else:
            batch = Counter((r[3], r[4], r[1], r[2]) for r in log if r[5] == self.batch)
        empty: object = Counter() if model == "bag_log" else {}
        previous = empty if full_refresh else self.consumed[model]
        if model == "keyed_log":
            assert batch == keyed_diff(previous, self.model.keyed)  # type: ignore[arg-type]
            assert self.replay_keyed(log) == self.model.keyed
        else:
            assert batch == bag_diff(previous, self.model.bag)  # type: ignore[arg-type]
            assert self.replay_bag(log) == self.model.bag

    @staticmethod
    def replay_keyed(log: list[tuple]) -> dict[int, Row]:
        state: dict[int, Row] = {}
        # by batch, DELETE before INSERT within a batch
        for k, a, b, action, _, _ in sorted(log, key=lambda row: (row[5], row[3])):
            if action == "DELETE":
                del state[k]
            else:
                state[k] = (a, b)
        return state

    @staticmethod
    def replay_bag(log: list[tuple]) -> Counter:
        state: Counter = Counter()
        for _, a, b, action, _, _ in log:
            state[(a, b)] += 1 if action == "INSERT" else -1
        return +state


class TestDifferentialFuzz(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES,
            "mirror.sql": MIRROR,
            "keyed_log.sql": KEYED_LOG,
            "bag_log.sql": BAG_LOG,
        }

    @pytest.fixture(scope="class")
    def macros(self):
        return {"fail_if_asked.sql": FAIL_IF_ASKED}

    def test_streams_agree_with_the_model(self, project):
        @given_(steps)
        @example_(APPENDS_THEN_DELETES_THEN_MIXED)
        def example(drawn):
            fuzz = Fuzz(project)
            fuzz.start()
            for batch, failing in drawn:
                for statement in batch:
                    statement.apply(project, fuzz.names, fuzz.model)
                fuzz.build(failing)
            fuzz.build(frozenset())

        example()
