"""Asking the test cluster's Connect server directly (not through dbt): its streams' offsets,
its tables' newest versions, what the last dbt run built, a Delta log's newest commit."""

import json
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql.connect.session import SparkSession as ConnectSession


def connect(spark_cluster: dict) -> ConnectSession:
    """Spark Connect's own builder (pyspark's common one refuses a remote session in a process
    that already runs an embedded one, as `make test`'s process does), with the token."""
    url = f"{spark_cluster['host']}/;token={spark_cluster['token']}"
    return ConnectSession.builder.remote(url).getOrCreate()


def query(spark_cluster: dict, statement: str) -> list[tuple]:
    spark = connect(spark_cluster)
    try:
        return [tuple(row) for row in spark.sql(statement).collect()]
    finally:
        spark.stop()


def shop_offsets(spark_cluster: dict) -> dict[str, int]:
    return dict(query(spark_cluster, "select name, offset_version from shop.dbt_streams"))


def behind_newest(spark_cluster: dict) -> dict[str, tuple[int, int]]:
    """The Delta streams whose offset is not their source's newest version: (offset, newest)."""
    streams = query(
        spark_cluster,
        "select name, source_table, offset_version from shop.dbt_streams "
        "where source_type = 'delta'",
    )
    newest = {
        table: query(spark_cluster, f"describe history {table} limit 1")[0][0]
        for table in {table for _, table, _ in streams}
    }
    return {
        name: (offset, newest[table]) for name, table, offset in streams if offset != newest[table]
    }


def succeeded_models(shop: Path, target: str = "target") -> set[str]:
    """The models the last run reported as built (run_results.json in its `target` folder)."""
    results = json.loads((shop / target / "run_results.json").read_text())["results"]
    return {
        result["unique_id"].split(".")[-1]
        for result in results
        if result["unique_id"].startswith("model.") and result["status"] == "success"
    }


def newest_log_version(log: Path) -> int:
    return max(int(entry.stem) for entry in log.glob("*.json"))


def wait_for(condition: Callable[[], bool], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
