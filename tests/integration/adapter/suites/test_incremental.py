"""dbt-tests-adapter's incremental suites on Delta (dbt-spark's `merge` strategy).

Not run: BaseMicrobatch below is run with dbt-spark's microbatch (insert_overwrite of the
batch's partition, which needs partition_by); delete+insert does not exist in dbt-spark.
"""

import pytest
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChange,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.util import run_dbt

MERGE = {"models": {"+incremental_strategy": "merge"}}

# The suite's model, without delete+insert: rows 1 and 2 change, row 3 is new; the predicate
# keeps row 2 from matching, so its new version is inserted beside the old one.
PREDICATES_MODEL = """
{{ config(materialized='incremental', unique_key='id') }}
{% if not is_incremental() %}
select cast(1 as bigint) as id, 'hello' as msg, 'blue' as color
union all select cast(2 as bigint) as id, 'goodbye' as msg, 'red' as color
{% else %}
select cast(1 as bigint) as id, 'hey' as msg, 'blue' as color
union all select cast(2 as bigint) as id, 'yo' as msg, 'green' as color
union all select cast(3 as bigint) as id, 'anyway' as msg, 'purple' as color
{% endif %}
"""

MICROBATCH_MODEL = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_time',
          batch_size='day', begin=modules.datetime.datetime(2020, 1, 1, 0, 0, 0),
          partition_by=['date_day']) }}
select *, cast(event_time as date) as date_day from {{ ref('input_model') }}
"""


class TestIncrementalUniqueKey(BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return MERGE


class TestIncrementalOnSchemaChange(BaseIncrementalOnSchemaChange):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "merge", "+unique_key": "id"}}

    def test_run_incremental_sync_all_columns(self, project):
        """sync_all_columns would drop a column, which a Delta table without column mapping
        cannot: dbt-spark refuses with a clear error before writing (README, limitations)."""
        for model in ("incremental_sync_all_columns", "incremental_sync_remove_only"):
            run_dbt(["run", "--models", f"model_a {model}", "--full-refresh"])
            results = run_dbt(["run", "--models", f"model_a {model}"], expect_pass=False)
            failed = [result for result in results if result.status == "error"]
            assert [result.node.name for result in failed] == [model]
            assert "Delta Lake does not support dropping columns" in failed[0].message


class TestIncrementalPredicates(BaseIncrementalPredicates):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+incremental_predicates": ["dbt_internal_dest.id != 2"],
                "+incremental_strategy": "merge",
            }
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_incremental_predicates.sql": PREDICATES_MODEL}


class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


class TestMicrobatch(BaseMicrobatch):
    @pytest.fixture(scope="class")
    def microbatch_model_sql(self) -> str:
        return MICROBATCH_MODEL
