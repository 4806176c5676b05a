"""dbt's merge settings on stream models: `merge_exclude_columns`, `merge_update_columns` and
`incremental_predicates`, with the meaning dbt's incremental models give them.

A model moved from dbt's `incremental` to `stream_incremental` keeps its config; these three
were silently ignored, so a column the user excluded from updates (the date a row was first
seen) was overwritten at the first update. Between two builds the source takes an update of
an old order, an update of a recent one, a delete and an insert. After the second build:

- the upsert (`merge`, excluding `first_seen`) holds the new status and amount of both updated
  orders and each order's first `first_seen`;
- the mirror updating only `status` (`apply_changes`) has the new statuses, the old amounts,
  and neither the deleted order;
- the mirror with dbt's predicate on the target's recent rows (`DBT_INTERNAL_DEST.ts >=
  '2026-06-01'`, as dbt users write it) updates and deletes the recent orders, and inserts the
  old order's update as a row of its own, as dbt's incremental MERGE with that predicate does;
  its MERGE's join carries the predicate on the target's alias.

The settings on a strategy that does not MERGE, a column the model does not write, both
column settings at once, and dbt-spark's `file_format` other than Delta or Hive bucketing (on
a stream model and a materialized view) fail the first build with one sentence naming the
model and the fix, and create nothing.
"""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import DeltaProject, merge_on_clauses, sources_yml

STREAM = "{{{{ stream(source('shop', 'orders'), name='{name}') }}}}"
MODELS = {
    "orders_kept": (
        "{{ config(materialized='stream_incremental', incremental_strategy='merge', "
        "unique_key='id', merge_exclude_columns=['first_seen']) }}\n"
        "select id, status, amount, ts as first_seen from "
        + STREAM.format(name="orders_kept_stream")
        + "\nwhere metadata_action = 'INSERT'\n"
    ),
    "orders_status": (
        "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
        "unique_key='id', merge_update_columns=['status']) }}\n"
        "select id, status, amount, metadata_action, metadata_isupdate from "
        + STREAM.format(name="orders_status_stream")
        + "\n"
    ),
    "orders_recent": (
        "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
        "unique_key='id', incremental_predicates=[\"DBT_INTERNAL_DEST.ts >= '2026-06-01'\"]) }}\n"
        "select id, status, amount, ts, metadata_action, metadata_isupdate from "
        + STREAM.format(name="orders_recent_stream")
        + "\n"
    ),
}
BAD = {
    "appended_excluding": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append', "
        "merge_exclude_columns=['amount']) }}\n"
        "select id, amount from " + STREAM.format(name="appended_stream") + "\n",
        "Model appended_excluding: merge_exclude_columns applies to incremental_strategy "
        "'merge' and 'apply_changes', not 'append'; remove it from the model's config.",
    ),
    "unknown_update": (
        "{{ config(materialized='stream_incremental', incremental_strategy='merge', "
        "unique_key='id', merge_update_columns=['status', 'nope']) }}\n"
        "select id, status from " + STREAM.format(name="unknown_stream") + "\n",
        "Model unknown_update: merge_update_columns names nope, not a column the model writes "
        "(id, status); correct the name or remove it.",
    ),
    "both_settings": (
        "{{ config(materialized='stream_incremental', incremental_strategy='merge', "
        "unique_key='id', merge_update_columns=['status'], merge_exclude_columns=['amount']) }}\n"
        "select id, status, amount from " + STREAM.format(name="both_stream") + "\n",
        "Model both_settings: merge_update_columns and merge_exclude_columns cannot both be "
        "set; keep one of them.",
    ),
    "parquet_target": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append', "
        "file_format='parquet') }}\n"
        "select id from " + STREAM.format(name="parquet_stream") + "\n",
        "Model parquet_target: file_format 'parquet' cannot hold this model's table, which is "
        "a Delta table: its write and its streams' offsets commit together in one Delta "
        "transaction. Remove file_format from the model's config, or set it to 'delta'.",
    ),
    "bucketed_mart": (
        "{{ config(materialized='materialized_view', clustered_by=['id'], buckets=4) }}\n"
        "select status, count(*) as n from {{ source('shop', 'orders') }} group by status\n",
        "Model bucketed_mart: clustered_by and buckets (Hive bucketing) are not available on "
        "Delta tables; remove them, or cluster the table with liquid_clustered_by.",
    ),
}
FIRST = (
    "(1, 'new', 10, date'2026-01-05'), (2, 'new', 20, date'2026-07-01'), "
    "(3, 'new', 30, date'2026-07-02')"
)
CHANGES = (
    "update {t} set status = 'paid', amount = 11, ts = date'2026-08-01' where id = 1",
    "update {t} set status = 'paid', amount = 21 where id = 2",
    "delete from {t} where id = 3",
    "insert into {t} values (4, 'new', 40, date'2026-08-02')",
)


def rows(project, sql: str) -> set[tuple]:
    return {tuple(str(v) for v in row) for row in project.run_sql(sql, fetch="all")}


class TestMergeSettings(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("shop", "orders"),
            **{f"{n}.sql": m for n, m in MODELS.items()},
            **{f"{n}.sql": m for n, (m, _) in BAD.items()},
        }

    def test_settings_as_in_dbt(self, project):
        schema = project.test_schema
        table = f"{schema}.orders"
        project.run_sql(
            f"create table {table} (id int, status string, amount int, ts date) using delta"
        )
        project.run_sql(f"insert into {table} values {FIRST}")
        results = run_dbt(["run", "--threads", "3"], expect_pass=False)
        by_name = {r.node.name: r for r in results}
        for name, (_, message) in BAD.items():
            assert by_name[name].status == "error", name
            assert message in by_name[name].message, by_name[name].message
        relations = {r[1] for r in project.run_sql(f"show tables in {schema}", fetch="all")}
        assert relations.isdisjoint(BAD), relations
        for statement in CHANGES:
            project.run_sql(statement.format(t=table))

        _, log = run_dbt_and_capture(["--debug", "run", "--threads", "3", "--select", *MODELS])

        assert rows(project, f"select * from {schema}.orders_kept") == {
            ("1", "paid", "11", "2026-01-05"),
            ("2", "paid", "21", "2026-07-01"),
            ("3", "new", "30", "2026-07-02"),
            ("4", "new", "40", "2026-08-02"),
        }
        assert rows(project, f"select * from {schema}.orders_status") == {
            ("1", "paid", "10"),
            ("2", "paid", "20"),
            ("4", "new", "40"),
        }
        assert rows(project, f"select * from {schema}.orders_recent") == {
            ("1", "new", "10", "2026-01-05"),
            ("1", "paid", "11", "2026-08-01"),
            ("2", "paid", "21", "2026-07-01"),
            ("4", "new", "40", "2026-08-02"),
        }
        on = merge_on_clauses(log)
        assert on["orders_recent"].endswith("and (t.ts >= '2026-06-01'"), on["orders_recent"]
