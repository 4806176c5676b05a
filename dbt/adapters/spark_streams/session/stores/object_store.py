"""Tables on an object store: what the embedded session needs to keep them on S3, or on any
store that speaks its API, through Hadoop's S3A connector, decided before the JVM starts.

A profile puts its tables there with `warehouse_dir: s3a://bucket/path` (or a source's
`location`), and hands the endpoint and keys to S3A in `server_side_parameters`, as with any
Spark (`spark.hadoop.fs.s3a.endpoint`, `...access.key`, `...secret.key`). The adapter then:

- adds `hadoop-aws` of the Hadoop inside PySpark (and, through its POM, the AWS SDK bundle it
  was built with) to the jars the start resolves, cached once per machine like Delta's;
- keeps S3A's conditional create on: a build takes its consumer's lease with a PUT that
  carries `If-None-Match: *` (lease.py), which is what makes one build of a consumer at a time
  true across processes (Delta's S3 log store alone serialises writers only inside one JVM);
- checks, once the JVM runs, that the store answers, takes the keys and has the bucket, each
  within the profile's connect_timeout x (connect_retries + 1), and says which is wrong.
"""

import re
from pathlib import Path
from urllib.parse import urlparse

from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.session.stores.reachable import unanswered

S3A = "s3a://"
S3A_CONF = "spark.hadoop.fs.s3a."
ENDPOINT = S3A_CONF + "endpoint"
HADOOP_CLIENT_JAR = re.compile(r"^hadoop-client-api-(\d+\.\d+\.\d+)\.jar$")
# The S3A settings the consumer leases rely on; a profile that sets them otherwise is refused.
COMMIT_CONFS = {
    # PUTs with If-None-Match / If-Match (S3A's default, which a profile could turn off).
    S3A_CONF + "create.conditional.enabled": "true",
}
DEFAULT_CONFS = {
    # A store other than AWS (S3Proxy, MinIO, Ceph) serves buckets under its endpoint's path.
    S3A_CONF + "path.style.access": "true",
}


def uses_s3a(creds: SparkStreamsCredentials) -> bool:
    """Whether the profile keeps tables on S3A: its warehouse there, or S3A settings given."""
    return (creds.warehouse_dir or "").startswith(S3A) or any(
        key.startswith(S3A_CONF) and str(value).strip()
        for key, value in creds.server_side_parameters.items()
    )


def hadoop_version(spark_home: Path) -> str:
    """The Hadoop version of PySpark's own jars (hadoop-client-api-<version>.jar)."""
    for jar in sorted((spark_home / "jars").glob("hadoop-client-api-*.jar")):
        found = HADOOP_CLIENT_JAR.match(jar.name)
        if found:
            return found[1]
    raise FailedToConnectError(
        f"No hadoop-client-api jar in {spark_home / 'jars'}: the PySpark installation is "
        "incomplete; reinstall pyspark."
    )


def packages(creds: SparkStreamsCredentials, spark_home: Path) -> str:
    """The Maven coordinates the start resolves: Delta's, and hadoop-aws for S3A."""
    if not uses_s3a(creds):
        return creds.delta_package
    return f"{creds.delta_package},org.apache.hadoop:hadoop-aws:{hadoop_version(spark_home)}"


def s3a_confs(creds: SparkStreamsCredentials) -> dict[str, str]:
    """The S3A settings the adapter starts with (the profile's own win, except the commit's)."""
    if not uses_s3a(creds):
        return {}
    for key, value in COMMIT_CONFS.items():
        given = str(creds.server_side_parameters.get(key, value)).strip().lower()
        if given != value:
            raise FailedToConnectError(
                f"server_side_parameters sets {key} to {given!r}: one build of a stream "
                f"consumer at a time across processes needs {value!r} (a conditional PUT of "
                "the consumer's lease); remove the setting."
            )
    return {**DEFAULT_CONFS, **COMMIT_CONFS}


def endpoint_address(creds: SparkStreamsCredentials) -> tuple[str, int] | None:
    """The host and port of the profile's S3A endpoint, None when it names none (AWS's)."""
    endpoint = str(creds.server_side_parameters.get(ENDPOINT, "")).strip()
    if not endpoint:
        return None
    parsed = urlparse(endpoint if "://" in endpoint else f"https://{endpoint}")
    default = 80 if parsed.scheme == "http" else 443
    return (parsed.hostname or "", parsed.port or default) if parsed.hostname else None


def require_endpoint(creds: SparkStreamsCredentials) -> None:
    """The store's endpoint must answer before the JVM starts: S3A would retry a closed port
    for minutes, and end in a stack."""
    address = endpoint_address(creds) if uses_s3a(creds) else None
    if address is None:
        return
    failed = unanswered(address, creds)
    if failed is None:
        return
    host, port = address
    raise FailedToConnectError(
        f"The object store at {host}:{port} ({ENDPOINT}) did not answer: {failed} "
        "(connect_timeout, connect_retries). Check that the store runs and that the endpoint's "
        "host and port are right."
    )
