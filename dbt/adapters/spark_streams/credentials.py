"""Profile keys of a `type: spark_streams` target.

The credentials extend dbt-spark's, so every dbt-spark key keeps its meaning. The additions
describe the embedded session the adapter builds itself (`method: session`) and the Spark
Connect endpoint (`method: connect`), with the secrets each may need in keys of their own
(`token`, `metastore_password`), which `env_var()` fills and dbt never prints.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark.connections import SparkCredentials
from dbt_common.dataclass_schema import StrEnum
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_streams.redaction import (
    MASK,
    holds_secret,
    jdbc_login,
    masked,
    secrets_in,
)
from dbt.adapters.spark_streams.versions import default_delta_package

# Delta copies a small table's file list into each commit's checksum file and, where the
# session's or the JVM's time zone is not UTC, checks that copy after every commit by rebuilding
# the table's state (0.5 s an INSERT, 0.9 s a MERGE). Open-source Delta never reads the copy to
# answer a query. The adapter's sessions leave it out (the embedded session, a Connect or Thrift
# server's session of this profile: FILE_LIST_LEFT_OUT), unless server_side_parameters set it.
ALL_FILES_IN_CRC = "spark.databricks.delta.allFilesInCrc.enabled"

# Delta's artifact for the installed PySpark (versions.py). Override with the
# `delta_package` profile key once a newer artifact is published.
DEFAULT_DELTA_PACKAGE = default_delta_package()

# The JIT's quick tier only: a dbt run is many short queries, and Delta's first scan spends
# seconds in Scala reflection that the optimising tier would compile too late to matter, on
# cores the queries need (the integration project's `dbt build`: 46 s instead of 61 s on 2
# cores). Data-heavy statements pay for it: a full rebuild of 20M rows took 72 s instead of
# 26 s, so the README tells users of large tables to set `jvm_options: ""`. That tier alone
# gets the client VM's 48 MB code cache, which a long session (a test process, a notebook)
# fills, and the JVM then spends minutes sweeping it: keep the full size.
DEFAULT_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"

CONNECT_EXTRA_HINT = "pip install 'dbt-spark-streams[connect]'"


class StreamsConnectionMethod(StrEnum):
    """dbt-spark's methods plus Spark Connect."""

    THRIFT = "thrift"
    HTTP = "http"
    ODBC = "odbc"
    SESSION = "session"
    CONNECT = "connect"


LOCAL_METHODS = (StreamsConnectionMethod.SESSION, StreamsConnectionMethod.CONNECT)
# Open-source Spark's sessions (ALL_FILES_IN_CRC); `http` and `odbc` reach Databricks, a
# runtime of its own, and keep its setting.
FILE_LIST_LEFT_OUT = (*LOCAL_METHODS, StreamsConnectionMethod.THRIFT)
_RETRIES = ("connect_timeout", "connect_retries")
# What `dbt debug` shows of each method's profile: its own keys, none of another method's.
DEBUG_KEYS = {
    StreamsConnectionMethod.SESSION: (
        "schema", "warehouse_dir", "metastore_dir", "metastore_url", "metastore_user",
        "metastore_password", "delta_package", "jars_dir", "master", "shuffle_partitions",
        *_RETRIES,
    ),
    StreamsConnectionMethod.CONNECT: ("host", "use_ssl", "token", "ca_cert", "schema", *_RETRIES),
    StreamsConnectionMethod.THRIFT: (
        "host", "port", "user", "auth", "kerberos_service_name", "use_ssl", "schema", *_RETRIES,
    ),
    StreamsConnectionMethod.HTTP: (
        "host", "port", "cluster", "endpoint", "organization", "token", "schema", *_RETRIES,
    ),
    StreamsConnectionMethod.ODBC: (
        "host", "port", "cluster", "endpoint", "driver", "schema", *_RETRIES,
    ),
}  # fmt: skip


@dataclass
class SparkStreamsCredentials(SparkCredentials):
    """dbt-spark credentials plus the embedded-session and Spark Connect settings."""

    method: StreamsConnectionMethod = StreamsConnectionMethod.SESSION  # type: ignore[assignment]
    warehouse_dir: str | None = None
    metastore_dir: str | None = None
    metastore_url: str | None = None
    metastore_driver_jar: str | None = None
    delta_package: str = DEFAULT_DELTA_PACKAGE
    jars_dir: str | None = None
    jvm_log: str | None = None
    master: str = "local[*]"
    driver_memory: str = "4g"
    shuffle_partitions: int = 4
    change_data_feed: bool = True
    # None: DEFAULT_JVM_OPTIONS (with the fast start on); "" for the JVM's own defaults.
    jvm_options: str | None = None
    # Spark Connect: a bearer token, TLS, and the CAs to trust (a PEM file) instead of the
    # system's; each may also sit in host, as Spark documents (`sc://h:443/;use_ssl=true`).
    token: str | None = None
    use_ssl: bool = False
    ca_cert: str | None = None
    # The metastore database's login, kept out of metastore_url.
    metastore_user: str | None = None
    metastore_password: str | None = None

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        """An embedded session has no host; dbt-spark insists on one, so supply it."""
        data = super().__pre_deserialize__(data)
        if data.get("method", "session") == "session":
            data.setdefault("host", "localhost")
        data.setdefault("method", "session")
        return data

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method in FILE_LIST_LEFT_OUT:
            self._leave_file_list_out()
        if self.method == StreamsConnectionMethod.CONNECT:
            self._require_connect_client()
            if not str(self.host).startswith("sc://"):
                raise DbtRuntimeError(
                    f"method: connect needs host to be a Spark Connect URL such as "
                    f"'sc://localhost:15002', got {masked(str(self.host))!r}"
                )
            if self.token and secrets_in(str(self.host)):
                raise DbtRuntimeError(
                    "The profile gives a Spark Connect token twice, in host and in token; keep "
                    "the token key (token: \"{{ env_var('SPARK_CONNECT_TOKEN') }}\") and take "
                    "it out of host."
                )
        if self.metastore_password and jdbc_login(self.metastore_url or "").password:
            raise DbtRuntimeError(
                "The profile gives the metastore's password twice, in metastore_url and in "
                "metastore_password; keep the key (metastore_password: "
                "\"{{ env_var('METASTORE_PASSWORD') }}\") and take it out of the URL."
            )
        if self.shuffle_partitions < 1:
            raise DbtRuntimeError(
                f"shuffle_partitions must be a positive integer, got {self.shuffle_partitions}"
            )

    def _leave_file_list_out(self) -> None:
        """ALL_FILES_IN_CRC off unless server_side_parameters set it (to true or false)."""
        crc = self.server_side_parameters.setdefault(ALL_FILES_IN_CRC, "false").strip().lower()
        if crc not in ("true", "false"):
            raise DbtRuntimeError(
                f"server_side_parameters sets {ALL_FILES_IN_CRC} to {crc!r}; use true or false."
            )
        self.server_side_parameters[ALL_FILES_IN_CRC] = crc

    @staticmethod
    def _require_connect_client() -> None:
        try:
            import grpc  # noqa: F401
            import pyarrow  # noqa: F401
        except ImportError as exc:
            raise DbtRuntimeError(
                f"method: connect needs the Spark Connect client libraries ({exc.name} is "
                f"missing). Install them with: {CONNECT_EXTRA_HINT}"
            ) from exc

    @property
    def type(self) -> str:
        return "spark_streams"

    def connect_url(self) -> str:
        """The Spark Connect URL the client dials: host, plus `use_ssl` and `token` from their
        own keys (a secret: never print it, print `masked(...)` of it)."""
        url = str(self.host)
        extra = [("use_ssl", "true")] if self.use_ssl and "use_ssl=" not in url.lower() else []
        extra += [("token", self.token)] if self.token else []
        if not extra:
            return url
        path = url if "/" in url.removeprefix("sc://") else url + "/"
        return path + "".join(f";{key}={value}" for key, value in extra)

    def secrets(self) -> list[str]:
        """Every secret the profile holds, wherever it sits, for scrubbing error texts."""
        found: Iterable[str | None] = [
            self.token,
            self.metastore_password,
            *secrets_in(str(self.host)),
            *secrets_in(self.metastore_url),
            *(str(v) for k, v in self.server_side_parameters.items() if holds_secret(k, v)),
        ]
        return [secret for secret in found if secret]

    def connection_info(self, *, with_aliases: bool = False) -> Iterable[tuple[str, Any]]:
        """What `dbt debug` prints (and dbt's log keeps): the connection keys, with every secret
        masked, a URL's included."""
        for key, value in super().connection_info(with_aliases=with_aliases):
            if key in ("token", "metastore_password"):
                yield key, MASK if value else value
            else:
                yield key, masked(value) if isinstance(value, str) else value

    def _connection_keys(self) -> tuple[str, ...]:
        """Keys `dbt debug` prints: those of the method in use, enough to tell where the data
        lives and how it is reached (a secret as *****, see connection_info)."""
        return ("method", *DEBUG_KEYS[StreamsConnectionMethod(self.method)])
