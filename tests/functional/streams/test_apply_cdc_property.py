"""apply_cdc's SQL on Spark against the reference, under drawn events (hypothesis).

Each example draws events (upserts with NULLs, deletes, duplicates, a struct sequence, and for
SCD type 1 truncates), a mode (SCD type 1, type 1 with ignore_null_updates, type 2, type 2 with
track_history_columns=['name']), whether the build's reads of the target name the batch's
key ranges (as on a large target; two ranges, so a gap between keys falls inside one), and
cuts the events into batches in a random order (in sequence order with ignore_null_updates);
the statements a build runs (streams/cdc/: the first build's rows, then per batch the
tombstones' append, the kept events' where history is tracked, and the MERGE) run on Delta
tables, and after every batch the target equals the reference (tests/unit/cdc/reference.py):
for type 1 applied batch by batch, which equals the reference applied to all events at once
(tests/unit/cdc/test_reference.py); for type 2 the versions of every event so far. dbt's side
of a build (streams, offsets, the commit) is test_apply_cdc.py's.

`make test` runs CDC_EXAMPLES (2) examples; `make fuzz` 20.
"""

import itertools
import os
from dataclasses import replace

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dbt.adapters.spark_streams.streams.cdc.config import CdcConfig
from dbt.adapters.spark_streams.streams.cdc.scd1 import CdcQuery
from dbt.adapters.spark_streams.streams.cdc.scd2 import Scd2Query
from dbt.adapters.spark_streams.streams.cdc.tracked import TrackedScd2Query
from dbt.adapters.spark_streams.streams.records.key_ranges import key_ranges_sql, target_predicate
from tests.functional.delta import DeltaProject
from tests.unit.cdc.reference import TRUNCATE, apply, rows, versions

EXAMPLES = int(os.environ.get("CDC_EXAMPLES", "2"))
EXAMPLE = itertools.count()
COLUMNS = ("id", "name", "n")
SEQUENCES = st.tuples(st.integers(0, 9), st.integers(0, 2))
KEYED = st.tuples(
    st.integers(0, 4),
    SEQUENCES,
    st.booleans(),
    st.fixed_dictionaries(
        {"name": st.none() | st.sampled_from(["a", "b"]), "n": st.none() | st.integers(0, 9)}
    ),
)
TRUNCATES = st.tuples(st.just(TRUNCATE), SEQUENCES, st.just(True), st.just({}))


def events(truncates: bool):
    drawn = st.one_of(KEYED, TRUNCATES) if truncates else KEYED
    return st.lists(drawn, max_size=16, unique_by=lambda e: (e[0], e[1]))


@st.composite
def batches(draw):
    mode = draw(st.sampled_from(["scd1", "partial", "scd2", "tracked"]))
    drawn = draw(events(truncates=mode in ("scd1", "partial")))
    partial = mode == "partial"
    copies = drawn + draw(st.lists(st.sampled_from(drawn), max_size=3)) if drawn else []
    order = sorted(copies, key=lambda e: e[1]) if partial else draw(st.permutations(copies))
    cuts = sorted(draw(st.lists(st.integers(0, len(order)), min_size=1, max_size=3)))
    bounds = [0, *cuts, len(order)]
    return mode, [order[a:b] for a, b in itertools.pairwise(bounds)]


def values(event) -> str:
    key, (ts, lsn), delete, columns = event
    if key is TRUNCATE:  # a truncate names no key
        return f"(null, null, null, false, {ts}, {lsn}, true)"
    name = "null" if columns["name"] is None else f"'{columns['name']}'"
    n = "null" if columns["n"] is None else str(columns["n"])
    return f"({key}, {name}, {n}, {'true' if delete else 'false'}, {ts}, {lsn}, false)"


def sequence(value) -> tuple | None:
    """A struct sequence as the reference writes it, (ts, lsn), however the cursor gives it."""
    if value is None:
        return None
    return tuple(value.values()) if isinstance(value, dict) else tuple(value)


class TestApplyCdcSqlUnderDrawnEvents(DeltaProject):
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(drawn=batches(), ranged=st.booleans())
    def test_the_target_equals_the_reference_after_every_batch(self, project, drawn, ranged):
        mode, cut = drawn
        partial, history = mode == "partial", mode in ("scd2", "tracked")
        n, schema, sql = next(EXAMPLE), project.test_schema, project.run_sql
        events_table, target = f"{schema}.ev_{n}", f"{schema}.cur_{n}"
        tombstones = f"{schema}.cur_{n}__cdc_tombstones"
        config = CdcConfig(
            sequence_by="struct(ts, lsn)",
            apply_as_deletes="del",
            apply_as_truncates=None if history else "tr",
            ignore_null_updates=partial,
            scd_type=2 if history else 1,
            track_history_columns=("name",) if mode == "tracked" else (),
        )
        if mode == "tracked":
            query = TrackedScd2Query(
                key=("id",), columns=COLUMNS, config=config, has_action=False,
                events_table=f"{target}__cdc_events",
            )  # fmt: skip
        else:
            kind = Scd2Query if history else CdcQuery
            query = kind(key=("id",), columns=COLUMNS, config=config, has_action=False)
        kept = query.events_sql if isinstance(query, TrackedScd2Query) else None
        seen: list = []
        sql(
            f"create table {events_table} (id int, name string, n int, del boolean, ts int, "
            "lsn int, tr boolean) using delta"
        )
        state: dict = {}
        for i, batch in enumerate(cut):
            sql(f"delete from {events_table}")
            if batch:
                sql(f"insert into {events_table} values {', '.join(map(values, batch))}")
            if i == 0:
                sql(query.tombstones_sql(events_table, tombstones, create=True))
                if kept:
                    sql(kept(events_table, create=True))
                sql(f"create table {target} using delta as {query.first_sql(events_table)}")
            else:
                sql(query.tombstones_sql(events_table, tombstones, create=False))
                if kept:
                    sql(kept(events_table, create=False))
                truncated = any(event[0] is TRUNCATE for event in batch)
                merged = query
                if ranged and not truncated:  # the batch's keys as two ranges (gaps inside)
                    found = sql(key_ranges_sql(events_table, "`id`", 2), fetch="all")
                    shown = [dict(zip(("low", "high", "has_null"), r, strict=True)) for r in found]
                    predicate = target_predicate("t.`id`", shown)
                    merged = replace(query, ranges=f" and {predicate}" if predicate else "")
                sql(merged.merge_sql(events_table, target, tombstones, truncated=truncated))
            seen += batch
            if history:
                got = sql(f"select id, __start_at, __end_at, name, n from {target}", fetch="all")
                found = {
                    (r[0], sequence(r[1]), sequence(r[2]), (("n", r[4]), ("name", r[3])))
                    for r in got
                }
                tracked = ["name"] if mode == "tracked" else None
                assert found == versions(seen, tracked), (i, cut)
                continue
            state = apply(state, batch, ignore_null_updates=partial)
            got = sql(f"select id, name, n from {target}", fetch="all")
            assert {r[0]: {"name": r[1], "n": r[2]} for r in got} == rows(state), (i, cut)
