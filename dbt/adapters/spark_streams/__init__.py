from dbt.adapters.base import AdapterPlugin

from dbt.adapters.spark_streams.connections import SparkStreamsConnectionManager
from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.impl import SparkStreamsAdapter
from dbt.include import spark_streams

Plugin = AdapterPlugin(
    adapter=SparkStreamsAdapter,  # type: ignore[arg-type]
    credentials=SparkStreamsCredentials,
    include_path=spark_streams.PACKAGE_PATH,
    dependencies=["spark"],
)

__all__ = ["Plugin", "SparkStreamsAdapter", "SparkStreamsConnectionManager"]
