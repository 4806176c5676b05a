"""`changes()` as a user calls it: in table and view models, a data test, `dbt show`, with a
stream's offset as its start and under --empty; every bad call fails with its own error, and
nothing (source, registry) is written.

History of `orders`: v0 create, v1 insert (1, new) (2, new), v2 update 1 to paid,
v3 delete 2, v4 insert (3, new).
"""

from pathlib import Path

from dbt.tests.util import run_dbt

from dbt.adapters.spark_streams.versions import installed_spark
from tests.functional.delta import DeltaProject, sources_yml

SOURCES = sources_yml("shop", "orders", "late_feed", "plain", "ghost")
COLUMNS = "id, status, metadata_action, metadata_isupdate"


def model(call: str, materialized: str = "table") -> str:
    return (
        f"{{{{ config(materialized='{materialized}') }}}}\n"
        f"select {COLUMNS} from {{{{ changes({call}) }}}}\n"
    )


ORDERS = "source('shop', 'orders')"
GOOD = {
    # standard netting with a key: the update of 1 is a pair, 2 deleted, 3 inserted
    "since_v1": (
        model(f"{ORDERS}, at={{'version': 1}}, unique_key='id'"),
        {
            (1, "new", "DELETE", True),
            (1, "paid", "INSERT", True),
            (2, "new", "DELETE", False),
            (3, "new", "INSERT", False),
        },
    ),
    # append_only: every row inserted in versions 1..3, as inserted
    "inserted_v1_to_v3": (
        model(
            f"{ORDERS}, before={{'version': 1}}, end={{'version': 3}}, information='append_only'"
        ),
        {(1, "new", "INSERT", False), (2, "new", "INSERT", False)},
    ),
    # a fixed interval may be a view: it never changes
    "fixed_view": (
        model(f"{ORDERS}, at={{'version': 1}}, end={{'version': 2}}", "view"),
        {(1, "new", "DELETE", False), (1, "paid", "INSERT", False)},
    ),
    # the change feed and its own table read by name in one statement (Spark's analyzer caches
    # relations by name; the feed is read by path so it is not taken for the plain table)
    "with_its_source": (
        "{{ config(materialized='table') }}\n"
        "select id, status, 'INSERT' as metadata_action, false as metadata_isupdate from (\n"
        f"  select id, status from {{{{ changes({ORDERS}, before={{'version': 0}}) }}}}\n"
        "  where metadata_action = 'INSERT'\n"
        "  except all select id, status from {{ source('shop', 'orders') }} where id > 1)\n",
        {(1, "paid", "INSERT", False)},
    ),
}

MIRROR = """{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
            unique_key='id') }}
select id, status, metadata_action, metadata_isupdate
from {{ stream(source('shop', 'orders'), name='orders_mirror') }}
"""
SINCE_MIRROR = model(f"{ORDERS}, at={{'stream': 'orders_mirror'}}")

# model name -> (call, the error text it must fail with); {schema} is the test schema
BAD = {
    "no_start": (f"{ORDERS}", "give exactly one of at= or before="),
    "two_starts": (f"{ORDERS}, at={{'version': 1}}, before={{'version': 2}}", "exactly one of"),
    "end_before_start": (
        f"{ORDERS}, at={{'version': 3}}, end={{'version': 2}}",
        "end (version 2) is before the start state (version 3)",
    ),
    "outside_history": (
        f"{ORDERS}, at={{'version': 9}}",
        "the start state (version 9) is outside the history of `{schema}`.`orders`, whose "
        "versions run from 0 to 4.",
    ),
    "time_before_history": (
        f"{ORDERS}, at={{'timestamp': '2001-01-01 00:00:00'}}",
        "the table has no state at 2001-01-01 00:00:00; its history begins with version 0",
    ),
    "before_feed_on": (
        "source('shop', 'late_feed'), before={'version': 1}",
        "the interval starts at version 1, before Change Data Feed was turned on for "
        "`{schema}`.`late_feed` (version 2); the earliest start is at={{'version': 1}}.",
    ),
    "unknown_stream": (
        f"{ORDERS}, at={{'stream': 'nope'}}",
        "at={{'stream': 'nope'}} names no stream. Run `dbt run-operation show_streams`",
    ),
    "stream_as_end": (
        f"{ORDERS}, at={{'version': 1}}, end={{'stream': 'orders_mirror'}}",
        "end= must be a mapping with one of 'version', 'timestamp'",
    ),
    "not_delta": (
        "source('shop', 'plain'), at={'version': 0}",
        "changes({schema}.plain): source `{schema}`.`plain` is a parquet table",
    ),
    "missing": (
        "source('shop', 'ghost'), at={'version': 0}",
        "changes({schema}.ghost): cannot read source `{schema}`.`ghost`",
    ),
    "bad_information": (f"{ORDERS}, at={{'version': 1}}, information='all'", "information='all'"),
    "bad_key": (
        f"{ORDERS}, at={{'version': 1}}, unique_key='nope'",
        "unique_key column(s) nope not in source `{schema}`.`orders`",
    ),
    "live_view": (
        (f"{ORDERS}, at={{'version': 1}}", "view"),
        "changes() without end= (or with at={{'stream': ...}}) cannot be used in a view",
    ),
}

DATA_TEST = """select * from {{ changes(source('shop', 'orders'), at={'version': 3}) }}
where metadata_action = 'DELETE'
"""


def bad_model(call: str | tuple[str, str]) -> str:
    return model(*call) if isinstance(call, tuple) else model(call)


class TestChanges(DeltaProject):
    def test_changes_read_intervals_and_write_nothing(self, project):
        schema = project.test_schema
        orders = f"{schema}.orders"
        project.run_sql(
            f"create table {orders} (id int, status string) using delta "
            "tblproperties (delta.enableChangeDataFeed = true)"
        )
        for statement in (
            f"insert into {orders} values (1, 'new'), (2, 'new')",
            f"update {orders} set status = 'paid' where id = 1",
            f"delete from {orders} where id = 2",
            f"insert into {orders} values (3, 'new')",
        ):
            project.run_sql(statement)
        late = f"{schema}.late_feed"
        project.run_sql(
            f"create table {late} (id int) using delta "
            "tblproperties (delta.enableChangeDataFeed = false)"
        )
        project.run_sql(f"insert into {late} values (1)")
        project.run_sql(
            f"alter table {late} set tblproperties (delta.enableChangeDataFeed = true)"
        )
        project.run_sql(f"create table {schema}.plain (id int) using parquet")

        root = Path(project.project_root)
        write(root / "models" / "sources.yml", SOURCES)
        good = dict(GOOD)
        if installed_spark().minor_line in ("4.0", "4.1"):  # a view of table_changes: 4.2+
            write(root / "models" / "older" / "fixed_view.sql", good.pop("fixed_view")[0])
        for name, (sql, _) in good.items():
            write(root / "models" / f"{name}.sql", sql)
        for name, (call, _) in BAD.items():
            write(root / "models" / "bad" / f"{name}.sql", bad_model(call))
        write(root / "tests" / "no_deletes_since_v3.sql", DATA_TEST)

        results = run_dbt(["build", "--exclude", "bad", "older"])
        assert {r.node.name for r in results} == {*good, "no_deletes_since_v3"}
        if "fixed_view" not in good:
            [older] = run_dbt(["run", "-s", "older"], expect_pass=False)
            said = " ".join(str(older.message).split())
            assert "Runtime Error A view cannot read changes() here: before Spark 4.2" in said
        for name, (_, rows) in good.items():
            got = project.run_sql(f"select {COLUMNS} from {schema}.{name}", fetch="all")
            assert {tuple(row) for row in got} == rows, name

        results = run_dbt(["run", "-s", "bad"], expect_pass=False)
        messages = {r.node.name: " ".join(r.message.split()) for r in results}
        for name, (_, error) in BAD.items():
            assert error.format(schema=schema) in messages[name], (name, messages[name])

        history = project.run_sql(f"describe history {orders}", fetch="all")
        assert max(row[0] for row in history) == 4  # changes() wrote nothing to the source

        inline = f"select id from {{{{ changes({ORDERS}, at={{'version': 3}}) }}}}"
        shown = run_dbt(["show", "--inline", inline])
        assert [tuple(row) for row in shown.results[0].agate_table.rows] == [(3,)]

        run_dbt(["run", "--empty", "-s", "since_v1"])
        assert project.run_sql(f"select * from {schema}.since_v1", fetch="all") == []

        write(root / "models" / "orders_mirror_model.sql", MIRROR)
        run_dbt(["run", "-s", "orders_mirror_model"])
        project.run_sql(f"insert into {orders} values (4, 'new')")
        write(root / "models" / "since_mirror.sql", SINCE_MIRROR)
        run_dbt(["run", "-s", "since_mirror"])
        got = project.run_sql(f"select {COLUMNS} from {schema}.since_mirror", fetch="all")
        assert [tuple(row) for row in got] == [(4, "new", "INSERT", False)]


def write(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
