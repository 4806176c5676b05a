"""dbt-tests-adapter's basic suites against `type: spark_streams` on Delta.

BaseEmpty, BaseGenericTests, BaseSingularTests and BaseSingularTestsEphemeral run, unchanged,
in dbt-spark's own tests for its session profile, which `make peer` runs against this adapter
(scripts/peer_suite.py); the rest dbt-spark skips for that profile, so they run here.
"""

import pytest
from dbt.tests.adapter.basic.expected_catalog import base_expected_catalog, no_stats
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection

from tests.functional.delta import delta_project


class TestSimpleMaterializations(BaseSimpleMaterializations):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project(name="base")


class TestEphemeral(BaseEphemeral):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project(name="ephemeral")


class TestIncremental(BaseIncremental):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project(name="incremental")


class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project(name="snapshot_strategy_check_cols")


class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project(name="snapshot_strategy_timestamp")


class TestAdapterMethod(BaseAdapterMethod):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project(name="adapter_methods")


class TestValidateConnection(BaseValidateConnection):
    pass


class TestDocsGenerate(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def project_config_update(self, unique_schema):
        return delta_project(
            **{
                "asset-paths": ["assets", "invalid-asset-paths"],
                "vars": {
                    "test_schema": unique_schema,
                    "alternate_schema": unique_schema + "_test",
                },
                "seeds": {"quote_columns": True},
            }
        )

    @pytest.fixture(scope="class")
    def expected_catalog(self, project, profile_user):
        return base_expected_catalog(
            project,
            role=profile_user,
            id_type="bigint",
            text_type="string",
            time_type="timestamp",
            view_type="view",
            table_type="table",
            model_stats=no_stats(),
        )
