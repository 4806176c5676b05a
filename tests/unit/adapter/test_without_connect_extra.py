"""The adapter as installed without the connect extra: `pip install dbt-spark-streams` has no
grpc, pandas or pyarrow, and the embedded session must still load. A module-level import of any
of them anywhere on dbt's path into the plugin breaks every user of the embedded session."""

import subprocess
import sys

CONNECT_EXTRA_ONLY = ("grpc", "grpc_status", "pandas", "pyarrow", "zstandard")

LOAD_THE_PLUGIN = f"""
import sys
for name in {CONNECT_EXTRA_ONLY!r}:
    sys.modules[name] = None  # import of it raises ImportError, as if not installed
from dbt.adapters.spark_streams import Plugin
from dbt.adapters.spark_streams.impl import SparkStreamsAdapter
import dbt.adapters.spark_streams.session.errors
print(Plugin.adapter.__name__)
"""


def test_the_plugin_loads_without_the_connect_extra() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", LOAD_THE_PLUGIN], capture_output=True, text=True, check=False
    )
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded.stdout.strip() == "SparkStreamsAdapter"
