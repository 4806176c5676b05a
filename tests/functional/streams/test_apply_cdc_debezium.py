"""apply_cdc on a Debezium feed as it lands: JSON files of change events in the envelope
(`before`, `after`, `op`, `ts_ms`, `source.lsn`), read by an insert-only stream on the folder,
`cdc_format: 'debezium'` reading the envelope (no flattening in the model), into a table of
current state and one of every version. Files of events land between builds, out of order
across files, and a table's truncate (op `t`) among them; after each build both tables equal
the reference over every event so far (the history, of scd_type 2, skips the truncate, counted
in its result line). An event of an op Debezium does not define fails the build in one
sentence, nothing moved.
"""

import json
import random

import pytest
from dbt.tests.util import run_dbt

from tests.conftest import session_credentials
from tests.functional.delta import DeltaProject, Landing, sources_yml
from tests.functional.streams.test_dbt_edges import messages
from tests.unit.cdc.reference import TRUNCATE, apply, rows, versions

SOURCES = sources_yml("landing", "customers_cdc")
STREAM = "{{ stream(source('landing', 'customers_cdc'), mode='insert_only') }}"
CONFIG = (
    "materialized='stream_incremental', incremental_strategy='apply_cdc', unique_key='id', "
    "cdc_format='debezium', sequence_by='struct(ts_ms, source.lsn)'"
)
CURRENT = f"{{{{ config({CONFIG}) }}}}\nselect * from {STREAM}\n"
HISTORY = f"{{{{ config({CONFIG}, scd_type=2, on_bad_event='skip') }}}}\nselect * from {STREAM}\n"
ROW = "struct<id: int, name: string, email: string>"
SCHEMA = f"(before {ROW}, after {ROW}, op string, ts_ms bigint, source struct<lsn: bigint>)"


def envelope(rng: random.Random, key: int, ts: int) -> dict:
    op = rng.choice(["c", "u", "u", "d", "r"])
    row = {"id": key, "name": rng.choice(["ann", "bo"]), "email": f"{key}@{ts}"}
    return {
        "before": row if op in ("u", "d") else None,
        "after": None if op == "d" else row,
        "op": op,
        "ts_ms": ts,
        "source": {"lsn": rng.randrange(3)},
    }


def as_events(landed: list[dict]) -> list:
    found = []
    for e in landed:
        if e["op"] == "t":
            found.append((TRUNCATE, (e["ts_ms"], e["source"]["lsn"]), True, {}))
            continue
        row = e["before"] if e["op"] == "d" else e["after"]
        values = {"name": row["name"], "email": row["email"]}
        found.append((row["id"], (e["ts_ms"], e["source"]["lsn"]), e["op"] == "d", values))
    return found


class TestDebeziumFeed(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, "customers.sql": CURRENT, "history.sql": HISTORY}

    def test_files_of_envelopes_into_current_state_and_history(self, project, spark, spark_home):
        schema, sql = project.test_schema, project.run_sql
        warehouse = str(session_credentials(spark_home).warehouse_dir)
        folder = Landing(spark, warehouse, f"debezium-{schema}")
        sql(
            f"create table {schema}.customers_cdc {SCHEMA} using json location '{folder.location}'"
        )
        rng, landed = random.Random(11), []
        for round_ in range(3):
            for file in range(2):  # the second file's events may be older: out of order
                base = 1000 * (round_ + 1) - 400 * file
                batch = [envelope(rng, rng.randrange(5), base + i) for i in range(6)]
                if (round_, file) == (1, 1):  # the table truncated, between its events
                    truncate = {"before": None, "after": None, "op": "t", "ts_ms": base + 3}
                    batch.insert(3, {**truncate, "source": {"lsn": 0}})
                lines = "\n".join(json.dumps(e) for e in batch)
                folder.put(f"events-{round_}-{file}.json", lines + "\n")
                landed += batch
            results = run_dbt(["run"])
            events = as_events(landed)
            want = rows(apply({}, events, ignore_null_updates=False))
            got = sql(f"select id, name, email from {schema}.customers", fetch="all")
            assert {r[0]: {"name": r[1], "email": r[2]} for r in got} == want, round_
            history = sql(
                f"select id, __start_at, __end_at, email, name from {schema}.history",
                fetch="all",
            )
            found = {
                (r[0], tuple(r[1].values()) if isinstance(r[1], dict) else tuple(r[1]),
                 None if r[2] is None else
                 tuple(r[2].values()) if isinstance(r[2], dict) else tuple(r[2]),
                 (("email", r[3]), ("name", r[4])))
                for r in history
            }  # fmt: skip
            assert found == versions(e for e in events if e[0] is not TRUNCATE), round_
            if round_ == 1:
                assert messages(results)["history"].endswith("; skipped 1 bad event(s)")

        columns = [r[0] for r in sql(f"describe {schema}.customers", fetch="all")]
        assert columns[:3] == ["id", "name", "email"]
        assert not {"op", "ts_ms", "source", "before", "after"} & set(columns)

        bad = {**envelope(rng, 1, 9000), "op": "x"}
        folder.put("events-bad.json", json.dumps(bad) + "\n")
        failed = run_dbt(["run", "-s", "customers"], expect_pass=False)
        said = " ".join(messages(failed)["customers"].split())
        assert (
            "Model customers: 1 event(s) have a NULL key (id) or a NULL sequence "
            "(struct(ts_ms, source.lsn)), or an op other than c, u, d, r, t, "
            'for example {"id":1}. Nothing was written and no offset moved.'
        ) in said, said
