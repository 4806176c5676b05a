"""The soak's project: the crash project (tests/integration/test_crash_safety.py) with four
threads, a hook that applies a batch's statements at the start of its build, a pre-hook that
fails a build on request, and three more consumers of the customers with their data tests."""

import shutil
from pathlib import Path

from tests.integration.test_crash_safety import INVARIANTS, PROJECT

PROFILE = """crash:
  target: dev
  outputs:
    dev:
      type: spark_streams
      method: session
      schema: crash
      threads: 4
      warehouse_dir: spark-warehouse
      metastore_dir: metastore
      shuffle_partitions: 1
      driver_memory: 1g
      jars_dir: "{{ env_var('SPARK_STREAMS_JARS_DIR', '') }}"
"""
# A hook that applies a batch's statements at the start of the batch's first build (one dbt
# process fewer per batch), and a pre-hook that fails a build on request.
MACROS = """
{% macro run_statements() %}
  {%- if execute -%}
    {%- for statement in var('statements', []) -%}{% do run_query(statement) %}{%- endfor -%}
  {%- endif -%}
  {{ return('select 1') }}
{% endmacro %}
{% macro fail_if_asked() %}
  {%- if var('fail', false) -%} select * from injected_failure_no_such_table
  {%- else -%} select 1 {%- endif -%}
{% endmacro %}
"""
# Two more consumers of the customers, with the strategies the crash project leaves out, and
# the data tests that check them after every build. Both name the change set's key ranges in
# their MERGE over files of a few rows (by default only a target of 256 MiB does): a range
# that missed a changed key would leave a duplicate or an open row behind, which the tests see.
# The view mirror is ranged too, so its join terms read the other table through the change
# set's join-key ranges (by default only a table of 32 MiB is), and it is clustered by amount,
# so its MERGE names the ranges of the old and new amounts instead of the key's: a range that
# missed a key would lose a row of the view or leave a duplicate, which its test sees.
RANGED = "key_ranges=true, file_rows=5"
EXTRA_MODELS = {
    "paired_mirror": (
        "{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
        f"unique_key='id', liquid_clustered_by='amount', {RANGED}) }}}}\n"
        "select * from {{ stream(ref('paired'), unique_key='id') }}\n"
    ),
    "customers_merge": (
        "{{ config(materialized='stream_incremental', incremental_strategy='merge', "
        f"unique_key='id', {RANGED}) }}}}\n"
        "select id, name, tier from {{ stream(source('raw', 'customers')) }}\n"
        "where metadata_action = 'INSERT'\n"
    ),
    "customers_history": (
        "{{ config(materialized='stream_incremental', incremental_strategy='history', "
        f"unique_key='id', {RANGED}) }}}}\n"
        "select id, name, tier, metadata_action, metadata_commit_version, "
        "metadata_commit_timestamp from {{ stream(source('raw', 'customers')) }}\n"
    ),
}
EXTRA_TESTS = {
    # a merge (upsert) target keeps deleted keys, but holds every source row, each key once
    "merge_holds_every_source_row": (
        "(select id, name, tier from {{ source('raw', 'customers') }}\n"
        " except all select id, name, tier from {{ ref('customers_merge') }})\n"
        "union all\n"
        "select id, null, null from {{ ref('customers_merge') }} group by id "
        "having count(*) > 1\n"
    ),
    # the open rows of the history are the source, exactly
    "history_open_rows_are_the_source": (
        "(select id, name, tier from {{ source('raw', 'customers') }}\n"
        " except all select id, name, tier from {{ ref('customers_history') }} "
        "where valid_to is null)\n"
        "union all\n"
        "(select id, name, tier from {{ ref('customers_history') }} where valid_to is null\n"
        " except all select id, name, tier from {{ source('raw', 'customers') }})\n"
    ),
}
CHECKS = (*INVARIANTS, *EXTRA_TESTS)


def prepare(root: Path) -> Path:
    """The crash project with threads 4, the soak's macros and the failure pre-hook."""
    project = root / "soak_project"
    shutil.copytree(PROJECT, project)
    (project / "profiles.yml").write_text(PROFILE)
    (project / "macros" / "soak.sql").write_text(MACROS)
    for name, sql in EXTRA_MODELS.items():
        (project / "models" / f"{name}.sql").write_text(sql)
    for name, sql in EXTRA_TESTS.items():
        (project / "tests" / f"{name}.sql").write_text(sql)
    config = (project / "dbt_project.yml").read_text()
    hooked = config.replace(
        "models: {+file_format: delta}",
        'models: {+file_format: delta, +pre-hook: "{{ fail_if_asked() }}"}',
    )
    hooked += '  - "{{ run_statements() }}"\n'
    (project / "dbt_project.yml").write_text(hooked)
    return project
