"""Every bad input the adapter rejects, with the error the README's table promises.

All the bad models build in one `dbt run`; each must fail with its own message, and none may
leave a target, a registry row or a changed source behind.
"""

import shutil

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import (
    DeltaProject,
    create_orders_without_change_data_feed,
    sources_yml,
    table_properties,
)

# Sources whose column is named like one a stream adds (any case), or like one of the change
# feed's: Delta refuses the feed on a table with `_change_type` itself, so that one has it off.
CLASHING = {
    "named_like_metadata": "(id int, Metadata_Row_Id string)",
    "named_like_feed": "(id int, _change_type string)",
    "named_like_feed_upper": "(id int, _Commit_Version bigint)",
}
SOURCES = sources_yml("shop", "orders", "plain", "orders_view", "ghost", "gone_folder", *CLASHING)


def consumer(select: str, source: str = "orders", stream_args: str = "", **config: str) -> str:
    settings = ", ".join(
        ["materialized='stream_incremental'"] + [f"{k}={v}" for k, v in config.items()]
    )
    return (
        f"{{{{ config({settings}) }}}}\n"
        f"select {select} from {{{{ stream(source('shop', '{source}'){stream_args}) }}}}\n"
    )


INSERT_ONLY = ", mode='insert_only'"
APPEND = {"incremental_strategy": "'append'"}
MIRROR_COLUMNS = "id, status, metadata_action, metadata_isupdate"
KEYED = {"incremental_strategy": "'apply_changes'", "unique_key": "'id'"}

# model name -> (model SQL, the error text it must fail with)
CASES = {
    "bad_strategy": (
        consumer("id", incremental_strategy="'upsert'"),
        "incremental_strategy 'upsert' is not supported by stream_incremental; use one of "
        "append, merge, apply_changes, history, apply_cdc.",
    ),
    "merge_without_key": (
        consumer("id", incremental_strategy="'merge'"),
        "incremental_strategy 'merge' needs a unique_key; add config(unique_key='...') or use "
        "incremental_strategy='append'.",
    ),
    "key_not_in_output": (
        consumer("status, metadata_action, metadata_isupdate", **KEYED),
        "unique_key column 'id' is not in the model's output (status, metadata_action, "
        "metadata_isupdate). Select it from the stream.",
    ),
    "mirror_without_action": (
        consumer("id, status", **KEYED),
        "incremental_strategy 'apply_changes' needs the stream's metadata_action column in the "
        "model's output. Select it from the stream.",
    ),
    "bad_on_schema_change": (
        consumer(MIRROR_COLUMNS, on_schema_change="'explode'", **KEYED),
        "on_schema_change 'explode' is not one of ignore, append_new_columns, sync_all_columns, "
        "fail.",
    ),
    "bad_flag": (
        consumer(MIRROR_COLUMNS, keep_metadata_columns="'yes'", **KEYED),
        "keep_metadata_columns must be true or false, not 'yes'.",
    ),
    "bad_extension": (
        consumer(MIRROR_COLUMNS, max_data_extension_time="-1", **KEYED),
        "max_data_extension_time must be a whole number of days (0 turns the retention "
        "extension off), not -1.",
    ),
    "bad_file_rows": (
        consumer(MIRROR_COLUMNS, file_rows="'many'", **KEYED),
        "file_rows must be a whole number of rows (0 for no cap), not 'many'.",
    ),
    "bad_mode": (
        consumer("id", stream_args=", mode='sideways'", incremental_strategy="'append'"),
        "Stream bad_mode__orders: mode 'sideways' is not supported on Delta tables; use one of "
        "standard, append_only.",
    ),
    "key_not_in_source": (
        consumer("id", stream_args=", unique_key='order_no'", incremental_strategy="'append'"),
        "Stream key_not_in_source__orders: unique_key column(s) order_no not in source "
        "`{schema}`.`orders` (columns: id, status).",
    ),
    "parquet_source": (
        consumer("id", source="plain", incremental_strategy="'append'"),
        "Stream parquet_source__plain: source `{schema}`.`plain` is a parquet table; standard "
        "and append_only streams need a Delta table with Change Data Feed. Read its new files "
        "with stream(..., mode='insert_only'), or convert it with `CONVERT TO DELTA`",
    ),
    "insert_only_on_delta": (
        consumer("id", stream_args=INSERT_ONLY, incremental_strategy="'append'"),
        "Stream insert_only_on_delta__orders: source `{schema}`.`orders` is a Delta table; mode "
        "'insert_only' reads the new files of a file-based table (Parquet, CSV, JSON, ...). Use "
        "mode='append_only' for the rows inserted into a Delta table since the offset.",
    ),
    "insert_only_on_view": (
        consumer("status", source="orders_view", stream_args=INSERT_ONLY, **APPEND),
        "Stream insert_only_on_view__orders_view: source {schema}.orders_view is a view; mode "
        "'insert_only' reads the new files of a file-based table. Use mode 'standard' or "
        "'append_only' on a view.",
    ),
    "history_of_files": (
        consumer(
            "id, metadata_action",
            source="plain",
            stream_args=INSERT_ONLY,
            incremental_strategy="'history'",
            unique_key="'id'",
        ),
        "Stream history_of_files__plain: incremental_strategy 'history' keeps the versions of a "
        "Delta table's rows; an insert_only stream's rows are new files' rows, each once.",
    ),
    "files_from_a_version": (
        consumer(
            "id",
            source="plain",
            stream_args=f"{INSERT_ONLY}, at={{'version': 1}}",
            incremental_strategy="'append'",
        ),
        "Stream files_from_a_version__plain: a file table has no versions; give "
        "at={{'timestamp': 'YYYY-MM-DD HH:MM:SS'}} (the files modified after it).",
    ),
    "files_folder_gone": (
        consumer(
            "id", source="gone_folder", stream_args=INSERT_ONLY, incremental_strategy="'append'"
        ),
        "Stream files_folder_gone__gone_folder: the location file:{folder} of source "
        "`{schema}`.`gone_folder` no longer exists, so its files cannot be listed. Restore the "
        "folder, or point the table at its new location and rebuild the consumer with "
        "--full-refresh.",
    ),
    "view_source": (
        consumer("id", source="orders_view", incremental_strategy="'append'"),
        "Stream view_source__orders_view: view {schema}.orders_view uses GROUP BY; a stream's "
        "view may only use projections, filters, inner and cross joins and UNION ALL.",
    ),
    "missing_source": (
        consumer("id", source="ghost", incremental_strategy="'append'"),
        "Stream missing_source__ghost: cannot read source `{schema}`.`ghost`",
    ),
    "at_and_before": (
        consumer(
            "id",
            stream_args=", at={'version': 0}, before={'version': 0}",
            incremental_strategy="'append'",
        ),
        "Stream at_and_before__orders: give at= or before=, not both",
    ),
    "at_in_the_future": (
        consumer("id", stream_args=", at={'version': 99}", incremental_strategy="'append'"),
        "Stream at_in_the_future__orders: start {{'version': 99}} is outside the history of "
        "`{schema}`.`orders`, whose versions run from 0 to 1.",
    ),
    "metadata_column_in_source": (
        consumer("id", source="named_like_metadata", incremental_strategy="'append'"),
        "Stream metadata_column_in_source__named_like_metadata: column 'Metadata_Row_Id' of "
        "source `{schema}`.`named_like_metadata` has the name of the stream's own "
        "metadata_row_id column (Spark compares names case-insensitively), so the stream's "
        "rows would hold two columns Spark cannot tell apart (AMBIGUOUS_REFERENCE). Rename the "
        "column in the source.",
    ),
    "feed_column_in_source": (
        consumer("id", source="named_like_feed", incremental_strategy="'append'"),
        "Stream feed_column_in_source__named_like_feed: column '_change_type' of source "
        "`{schema}`.`named_like_feed` has the name of the change feed's own _change_type "
        "column, and Delta refuses to turn the Change Data Feed on for a table with such a "
        "column, so no stream can follow it. Rename the column in the source.",
    ),
    "feed_column_in_other_case": (
        consumer("id", source="named_like_feed_upper", incremental_strategy="'append'"),
        "Stream feed_column_in_other_case__named_like_feed_upper: column '_Commit_Version' of "
        "source `{schema}`.`named_like_feed_upper` has the name of the change feed's own "
        "_commit_version column (Spark compares names case-insensitively), so every change "
        "read, and with the feed on Delta's own UPDATE, DELETE and MERGE of the source, fails "
        "with AMBIGUOUS_REFERENCE. Rename the column in the source.",
    ),
    "bad_timestamp": (
        consumer(
            "id", stream_args=", at={'timestamp': 'yesterday'}", incremental_strategy="'append'"
        ),
        "Stream start {{'timestamp': 'yesterday'}} on `{schema}`.`orders`: Invalid isoformat "
        "string: 'yesterday'.",
    ),
    "stream_of_a_table_model": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        "select id from {{ stream(ref('plain_copy')) }}",
        "Model stream_of_a_table_model: stream() cannot follow plain_copy, a table model: dbt "
        "replaces its table at each run, and a replaced table's changes start over. Make "
        "plain_copy incremental (or stream_incremental), or a view over its sources, which a "
        "stream follows.",
    ),
    "stream_in_incremental": (
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        "select id from {{ stream(source('shop', 'orders')) }}",
        "Model stream_in_incremental: stream() in an incremental model is a read-only peek, so "
        "every run would read the same pending changes again (an append writes them twice). "
        "Make it materialized='stream_incremental', which consumes the stream with the same "
        "strategies (append, merge) and more.",
    ),
    "stream_of_a_full_mart": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        "select status from {{ stream(ref('full_mart')) }}",
        "Model stream_of_a_full_mart: stream() cannot follow full_mart, a materialized view "
        "that refreshes fully: it replaces its table at each run, and a replaced table's "
        "changes start over. Let full_mart refresh incrementally (its result line says what "
        "stops it), or read the streams of its sources instead.",
    ),
    "reads_no_stream": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        "select id from {{ source('shop', 'orders') }}",
        "Model reads_no_stream: a stream_incremental model consumes the streams its own SQL "
        "reads with stream(), and reads_no_stream calls none, so every run would write all of "
        "its rows again. Call stream(source(...)) or stream(ref(...)) in reads_no_stream itself "
        "(one in an ephemeral model it reads is a peek that never moves), or make it a table or "
        "an incremental model.",
    ),
    "stream_in_ephemeral": (
        "{{ config(materialized='stream_incremental', incremental_strategy='append') }}\n"
        "select id from {{ ref('peek_ephemeral') }}",
        "Model stream_in_ephemeral: a stream_incremental model consumes the streams its own "
        "SQL reads with stream(), and stream_in_ephemeral calls none",
    ),
}
# An ephemeral model's stream() is a peek (stream_in_ephemeral reads it).
PEEK_EPHEMERAL = (
    "{{ config(materialized='ephemeral') }}\nselect id from {{ stream(ref('plain_copy')) }}"
)
# A materialized view that refreshes fully (stream_of_a_full_mart reads it).
FULL_MART = (
    "{{ config(materialized='materialized_view', refresh='full') }}\n"
    "select status, count(*) as n from {{ source('shop', 'orders') }} group by status"
)
# A table model, which dbt builds (the one table a run leaves beside the sources).
PLAIN_COPY = "{{ config(materialized='table') }}\nselect * from {{ source('shop', 'plain') }}"


class TestBadInput(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        cases = {f"{n}.sql": sql for n, (sql, _) in CASES.items()}
        return {
            "sources.yml": SOURCES,
            "plain_copy.sql": PLAIN_COPY,
            "peek_ephemeral.sql": PEEK_EPHEMERAL,
            "full_mart.sql": FULL_MART,
            **cases,
        }

    def test_each_rejected_with_its_error_and_nothing_written(self, project, tmp_path):
        schema = project.test_schema
        folder = tmp_path / "gone_folder"
        project.run_sql(
            f"create table {schema}.gone_folder (id int) using parquet location '{folder}'"
        )
        project.run_sql(f"insert into {schema}.gone_folder values (1)")
        shutil.rmtree(folder)
        create_orders_without_change_data_feed(project)
        project.run_sql(f"insert into {schema}.orders values (1, 'placed')")
        project.run_sql(f"create table {schema}.plain (id int) using parquet")
        project.run_sql(
            f"create view {schema}.orders_view as "
            f"select status, count(*) as n from {schema}.orders group by status"
        )
        for table, columns in CLASHING.items():
            feed = "false" if table == "named_like_feed" else "true"
            project.run_sql(
                f"create table {schema}.{table} {columns} using delta "
                f"tblproperties (delta.enableChangeDataFeed = {feed})"
            )
        before = {table: table_properties(project, table) for table in ["orders", *CLASHING]}

        results = run_dbt(["run"], expect_pass=False)
        messages = {result.node.name: " ".join(result.message.split()) for result in results}
        for name, (_, error) in CASES.items():
            assert error.format(schema=schema, folder=folder) in messages[name], name

        listed = project.run_sql(f"show tables in {schema}", fetch="all")
        tables = {name for _, name, temporary in listed if not temporary}  # not dbt's temp views
        sources = {"orders", "plain", "orders_view", "gone_folder", *CLASHING}
        registry = {"dbt_streams", "dbt_streams_log", "dbt_streams_files"}
        built = tables - registry - {"plain_copy", "full_mart"}
        assert built == sources
        assert project.run_sql(f"select * from {schema}.dbt_streams", fetch="all") == []
        assert project.run_sql(f"select * from {schema}.dbt_streams_files", fetch="all") == []
        assert {table: table_properties(project, table) for table in before} == before

    def test_describe_an_unknown_stream(self, project):
        _, log = run_dbt_and_capture(
            ["run-operation", "describe_stream", "--args", "{name: nope}"], expect_pass=False
        )
        message = " ".join(log.split())
        assert "No stream named 'nope'. Run `dbt run-operation show_streams`" in message
