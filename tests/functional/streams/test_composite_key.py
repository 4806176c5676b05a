"""A unique_key of two columns, as order lines are keyed: (order_id, line_no).

The mirror (`apply_changes`, with key ranges over files of two rows), the upsert (`merge`) and
the type-2 history each key on both columns. Between two builds the source takes an update, a
delete, new lines of an existing and of a new order, a key change (line 1 of order 3 becomes
line 3) and a line with a null line_no; after the second build the mirror equals the source,
the upsert holds every key's newest row (deleted keys included), the history's open rows equal
the source and its closed rows are exactly the replaced versions, and the MERGEs name the
ranges of the key's first column only. Two keys that share a first column stay two rows.
"""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import DeltaProject, merge_on_clauses, sources_yml

KEY = "unique_key=['order_id', 'line_no']"
COLUMNS = "order_id, line_no, qty"
MODELS = {
    "lines_mirror": (
        "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
        f"{KEY}, key_ranges=true, file_rows=2) }}}}\n"
        f"select {COLUMNS}, metadata_action, metadata_isupdate "
        "from {{ stream(source('shop', 'lines')) }}\n"
    ),
    "lines_merge": (
        "{{ config(materialized='stream_incremental', incremental_strategy='merge', "
        f"{KEY}, key_ranges=true) }}}}\n"
        f"select {COLUMNS} from {{{{ stream(source('shop', 'lines'), name='lines_upserts') }}}}\n"
        "where metadata_action = 'INSERT'\n"
    ),
    "lines_history": (
        "{{ config(materialized='stream_incremental', incremental_strategy='history', "
        f"{KEY}) }}}}\n"
        f"select {COLUMNS}, metadata_action, metadata_commit_version, metadata_commit_timestamp "
        "from {{ stream(source('shop', 'lines'), name='lines_versions') }}\n"
    ),
}
FIRST = [(1, 1, 5), (1, 2, 3), (2, 1, 7), (3, 1, 1)]
CHANGES = (
    "update {t} set qty = 4 where order_id = 1 and line_no = 2",
    "delete from {t} where order_id = 2 and line_no = 1",
    "insert into {t} values (1, 3, 2), (4, 1, 8)",
    "update {t} set line_no = 3 where order_id = 3 and line_no = 1",
    "insert into {t} values (5, null, 9)",
)
NOW = {(1, 1, 5), (1, 2, 4), (1, 3, 2), (3, 3, 1), (4, 1, 8), (5, None, 9)}


def rows(project, sql: str) -> set[tuple]:
    return {tuple(row) for row in project.run_sql(sql, fetch="all")}


class TestCompositeKey(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("shop", "lines"),
            **{f"{n}.sql": m for n, m in MODELS.items()},
        }

    def test_two_column_key(self, project):
        table = f"{project.test_schema}.lines"
        project.run_sql(f"create table {table} (order_id int, line_no int, qty int) using delta")
        project.run_sql(f"insert into {table} values " + ", ".join(map(str, FIRST)))
        run_dbt(["run", "--threads", "3"])
        for statement in CHANGES:
            project.run_sql(statement.format(t=table))

        _, log = run_dbt_and_capture(["--debug", "run", "--threads", "3"])

        def target(name: str, where: str = "true") -> set[tuple]:
            return rows(
                project, f"select {COLUMNS} from {project.test_schema}.{name} where {where}"
            )

        assert rows(project, f"select {COLUMNS} from {table}") == NOW
        assert target("lines_mirror") == NOW
        # the upsert keeps the keys the source lost: deleted, and the old key of the key change
        assert target("lines_merge") == NOW | {(2, 1, 7), (3, 1, 1)}
        assert target("lines_history", "valid_to is null") == NOW
        assert target("lines_history", "valid_to is not null") == {(1, 2, 3), (2, 1, 7), (3, 1, 1)}
        on = merge_on_clauses(log)
        # both key columns joined, null-safe; the ranges bound the first column only
        key_match = "t.`order_id` <=> s.`order_id` and t.`line_no` <=> s.`line_no`"
        assert on["lines_mirror"].startswith(f"{key_match} and (t.`order_id` between 1 and 5)")
        # the upserts' keys (INSERT rows only) leave a gap at order 2
        ranges = "(t.`order_id` between 1 and 1 or t.`order_id` between 3 and 5)"
        assert on["lines_merge"].startswith(f"{key_match} and {ranges}")
        assert on["lines_history"].startswith(key_match) and "between" not in on["lines_history"]
