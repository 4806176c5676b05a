"""SparkStreamsAdapter: dbt-spark's adapter under the `spark_streams` type."""

from dbt.adapters.base.impl import AdapterTrackingRelationInfo
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.spark import SparkAdapter

from dbt.adapters.spark_streams.__version__ import version
from dbt.adapters.spark_streams.connections import SparkStreamsConnectionManager


class SparkStreamsAdapter(SparkAdapter):
    """Everything dbt-spark does, on a session this adapter builds; streams build on it."""

    ConnectionManager = SparkStreamsConnectionManager

    @classmethod
    def type(cls) -> str:
        return "spark_streams"

    @classmethod
    def get_adapter_run_info(cls, config: RelationConfig) -> AdapterTrackingRelationInfo:
        """dbt derives the module from the class name ('sparkstreams'); name it correctly."""
        from dbt.adapters.__about__ import version as base_version

        return AdapterTrackingRelationInfo(
            adapter_name=cls.type(),
            base_adapter_version=base_version,
            adapter_version=version,
            model_adapter_details=cls._get_adapter_specific_run_info(config),
        )
