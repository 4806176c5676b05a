"""Streams on views as a user builds them: a catalog view (source) and a dbt view model (ref)
joining orders with customers, consumed by an apply_changes mirror (keyed on a view column),
an append log of every change and an append_only log, built with two threads. A change to
either table reaches the consumers once; each base table's offset moves with the target; a
redefined view is refused until --full-refresh; a construct a stream cannot follow is refused
before anything is written.
"""

from pathlib import Path

from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, sources_yml

SOURCES = sources_yml("shop", "orders", "customers", "order_details")
ALL_SOURCES = sources_yml("shop", "orders", "customers", "order_details", "all_customers")
CUSTOMERS_MIRROR = (
    "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
    "unique_key='id') }}\n"
    "select * from {{ stream(source('shop', 'all_customers'), unique_key='id') }}\n"
)
CDF = "using delta tblproperties (delta.enableChangeDataFeed = true)"
DETAILS = (
    "select o.id as order_id, o.status, c.name as customer "
    "from {schema}.orders o join {schema}.customers c on o.customer_id = c.id"
)
MODELS = {
    # a dbt view model over the tables: a stream reads it through ref()
    "paid_orders": (
        "{{ config(materialized='view') }}\n"
        "select o.id as order_id, upper(c.name) as customer\n"
        "from {{ source('shop', 'orders') }} o, {{ source('shop', 'customers') }} c\n"
        "where o.customer_id = c.id and o.status = 'paid'\n"
    ),
    "details_mirror": (
        "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
        "unique_key='order_id') }}\n"
        "select * from {{ stream(source('shop', 'order_details'), unique_key='order_id') }}\n"
    ),
    "details_log": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        "select order_id, status, customer, metadata_action, metadata_isupdate\n"
        "from {{ stream(source('shop', 'order_details'), name='details_for_log') }}\n"
    ),
    "details_merged": (
        "{{ config(materialized='stream_incremental', incremental_strategy='merge', "
        "unique_key='order_id') }}\n"
        "select order_id, status, customer from {{ stream(source('shop', 'order_details'), "
        "unique_key='order_id', name='details_for_merge') }}\n"
        "where metadata_action = 'INSERT'\n"
    ),
    "paid_from_now": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        "select order_id, customer, metadata_action\n"
        "from {{ stream(ref('paid_orders'), show_initial_rows=false) }}\n"
    ),
    # a peek: reads details_for_log's pending changes without moving its offsets
    "details_peek": (
        "{{ config(materialized='table') }}\n"
        "select order_id, customer, metadata_action\n"
        "from {{ stream(source('shop', 'order_details'), name='details_for_log') }}\n"
    ),
    "paid_appends": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        "select order_id, customer, metadata_action\n"
        "from {{ stream(ref('paid_orders'), mode='append_only') }}\n"
    ),
}


CHANGES_SINCE = (
    "select order_id, customer, metadata_action, metadata_isupdate from {{{{ changes("
    "source('shop', 'order_details'), at={{'timestamp': '{moment}'}}, unique_key='order_id') }}}}"
)

SINCE = (
    "{{{{ config(materialized='stream_incremental', incremental_strategy='append') }}}}\n"
    "select order_id, customer, metadata_action from {{{{ stream(source('shop', "
    "'order_details'), at={{'timestamp': '{moment}'}}) }}}}\n"
)


class TestViewStreams(DeltaProject):
    def test_view_streams_follow_their_tables(self, project, capsys):
        schema = project.test_schema
        sql = project.run_sql
        sql(f"create table {schema}.orders (id int, customer_id int, status string) {CDF}")
        sql(f"create table {schema}.customers (id int, name string) {CDF}")
        sql(f"insert into {schema}.customers values (1, 'ann'), (2, 'bob')")
        sql(f"insert into {schema}.orders values (10, 1, 'new'), (11, 2, 'paid')")
        sql(f"create view {schema}.order_details as {DETAILS.format(schema=schema)}")
        root = Path(project.project_root)
        (root / "models" / "sources.yml").write_text(SOURCES)
        for name, text in MODELS.items():
            (root / "models" / f"{name}.sql").write_text(text)

        run_dbt(["build", "--threads", "2"])
        assert self.rows(project, "details_mirror") == {(10, "new", "ann"), (11, "paid", "bob")}
        assert self.rows(project, "paid_appends", "order_id, customer, metadata_action") == {
            (11, "BOB", "INSERT")
        }
        assert self.rows(project, "paid_from_now", "order_id") == set()

        before_batch = max(self.latest_time(project, t) for t in ("orders", "customers"))
        sql(f"update {schema}.customers set name = 'anna' where id = 1")  # joined row changes
        sql(f"insert into {schema}.orders values (12, 2, 'paid')")
        sql(f"delete from {schema}.orders where id = 11")
        run_dbt(["run", "-s", "details_peek"])
        assert self.rows(project, "details_peek", "order_id, customer, metadata_action") == {
            (10, "ann", "DELETE"),
            (10, "anna", "INSERT"),
            (11, "bob", "DELETE"),
            (12, "bob", "INSERT"),
        }
        run_dbt(["run", "--threads", "2", "--exclude", "details_peek"])
        assert self.rows(project, "details_mirror") == {(10, "new", "anna"), (12, "paid", "bob")}
        log = "order_id, status, customer, metadata_action, metadata_isupdate"
        assert self.rows(project, "details_log", log) == {
            (10, "new", "ann", "INSERT", False),  # initial rows
            (11, "paid", "bob", "INSERT", False),
            (10, "new", "ann", "DELETE", False),  # no unique_key: values net as a multiset
            (10, "new", "anna", "INSERT", False),
            (11, "paid", "bob", "DELETE", False),
            (12, "paid", "bob", "INSERT", False),
        }
        assert self.rows(project, "paid_appends", "order_id, customer, metadata_action") == {
            (11, "BOB", "INSERT"),
            (12, "BOB", "INSERT"),
        }
        assert self.rows(project, "paid_from_now", "order_id, customer, metadata_action") == {
            (11, "BOB", "DELETE"),
            (12, "BOB", "INSERT"),
        }
        # merge keeps deleted keys (it only upserts what the model selects)
        assert self.rows(project, "details_merged") == {
            (10, "new", "anna"),
            (11, "paid", "bob"),
            (12, "paid", "bob"),
        }
        offsets = {
            row[0]: row[1]
            for row in sql(
                f"select name, offset_version from {schema}.dbt_streams "
                "where name like 'details_for_log@%'",
                fetch="all",
            )
        }
        assert offsets == {
            f"details_for_log@{schema}.orders": self.version(project, "orders"),
            f"details_for_log@{schema}.customers": self.version(project, "customers"),
        }

        # changes() on the view: the same batch, read-only, from a moment before it
        shown = run_dbt(["show", "--inline", CHANGES_SINCE.format(moment=before_batch)])
        assert {tuple(row) for row in shown.results[0].agate_table.rows} == {
            (10, "ann", "DELETE", True),
            (10, "anna", "INSERT", True),
            (11, "bob", "DELETE", False),
            (12, "bob", "INSERT", False),
        }

        # a new view stream started at a moment: the changes since, on every base table
        (root / "models" / "details_since.sql").write_text(SINCE.format(moment=before_batch))
        run_dbt(["run", "-s", "details_since"])
        assert self.rows(project, "details_since", "order_id, customer, metadata_action") == {
            (10, "ann", "DELETE"),
            (10, "anna", "INSERT"),
            (11, "bob", "DELETE"),
            (12, "bob", "INSERT"),
        }

        run_dbt(["run", "-s", "details_mirror"])  # nothing new: nothing changes
        assert self.rows(project, "details_mirror") == {(10, "new", "anna"), (12, "paid", "bob")}

        sql(f"create or replace view {schema}.order_details as {DETAILS.format(schema=schema)} "
            "where o.status <> 'void'")  # fmt: skip
        results = run_dbt(["run", "-s", "details_mirror"], expect_pass=False)
        message = " ".join(results[0].message.split())
        assert (
            f"Stream details_mirror__order_details is stale: view {schema}.order_details (or a "
            "view it reads) was redefined since the stream was created" in message
        )
        run_dbt(["run", "-s", "details_mirror", "--full-refresh"])
        assert self.rows(project, "details_mirror") == {(10, "new", "anna"), (12, "paid", "bob")}

        with project.adapter.connection_named("__show_streams"):
            status = {r["name"]: r for r in project.adapter.stream_records()}
        assert status["details_mirror__order_details"]["source_type"] == "view"
        assert not status["details_mirror__order_details"]["stale"]  # recreated
        assert status["details_for_log"]["stale_reason"] == (
            f"view {schema}.order_details (or a view it reads) was redefined"
        )
        assert status[f"details_for_log@{schema}.orders"]["source_type"] == "delta"

        capsys.readouterr()
        run_dbt(["run-operation", "describe_stream", "--args", "{name: details_for_log}"])
        printed = capsys.readouterr().out
        assert "source_type        view" in printed
        version = self.version(project, "orders")
        assert f"table offset       `{schema}`.`orders` version {version} (" in printed

        # a view over `select *` keeps its columns when its table gains one, as Spark reads it
        sql(f"create view {schema}.all_customers as select * from {schema}.customers")
        (root / "models" / "sources.yml").write_text(ALL_SOURCES)
        (root / "models" / "customers_mirror.sql").write_text(CUSTOMERS_MIRROR)
        run_dbt(["run", "-s", "customers_mirror"])
        sql(f"alter table {schema}.customers add columns (tier string)")
        sql(f"update {schema}.customers set name = 'anne', tier = 'gold' where id = 1")
        run_dbt(["run", "-s", "customers_mirror"])
        assert self.rows(project, "customers_mirror", "id, name") == {(1, "anne"), (2, "bob")}
        described = sql(f"describe table {schema}.customers_mirror", fetch="all")
        assert [row[0] for row in described] == ["id", "name"]  # no tier, no metadata

    @staticmethod
    def rows(project, table: str, columns: str = "order_id, status, customer") -> set:
        got = project.run_sql(f"select {columns} from {project.test_schema}.{table}", fetch="all")
        return {tuple(row) for row in got}

    @staticmethod
    def latest_time(project, table: str) -> str:
        history = project.run_sql(
            f"describe history {project.test_schema}.{table} limit 1", fetch="all"
        )
        return history[0][1].strftime("%Y-%m-%d %H:%M:%S.%f")

    @staticmethod
    def version(project, table: str) -> int:
        history = project.run_sql(
            f"describe history {project.test_schema}.{table} limit 1", fetch="all"
        )
        return int(history[0][0])
