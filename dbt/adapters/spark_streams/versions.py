"""What differs between the Spark versions the adapter runs on, decided here and nowhere else.

Delta Lake publishes one Scala artifact per Spark minor version (`delta-spark_4.1_2.13`), so
the Delta package an embedded session or a project's own servers load follows the installed
PySpark. Delta 4.4.0 is the newest release on Maven Central for each of Spark 4.0, 4.1 and 4.2
(the Python package `delta-spark` 4.4.1 is a wrapper the adapter does not need, and it caps
PySpark at 4.2.0). No Delta release supports Spark 4.3 yet: a session on PySpark 4.3 fails at
start with a sentence instead of a class-loading error half-way through a build.

Spark Connect's Python client differs too, and is read here by what it offers rather than by
its number: 4.0's retry policy has no `max_server_retry_delay` (`accepted_keywords`), and its
errors do not carry their gRPC status, which stays on the gRPC error they were raised from
(`grpc_status_name`). And two Spark lines fail where later ones do not; `line_limit` says
so in a sentence (session/errors.py). This module imports nothing, PySpark included: the
profile's defaults (credentials.py) read it before a JVM starts.
"""

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

DELTA_VERSION = "4.4.0"
SCALA_VERSION = "2.13"
# The Spark minor versions a Delta release on Maven Central supports, oldest first.
SUPPORTED_SPARK = ("4.0", "4.1", "4.2")
# What Spark says where an older line cannot do what a newer one does, and what to do.
LINE_LIMITS = (
    (
        ("INVALID_TEMP_OBJ_REFERENCE", "table_changes"),
        "A view cannot read changes() here: before Spark 4.2 Delta's table_changes "
        "is a temporary function, which a view may not reference. Materialize the model as a "
        "table (or incremental, or stream_incremental), or run on Spark 4.2.",
    ),
    (
        ("Not implemented. VariantType",),
        "Spark 4.0 cannot read a VARIANT column of a Delta table whose rows deletion vectors "
        "mark (stream targets have them by default); Spark 4.1 can. On Spark 4.0, give stream "
        "models with VARIANT columns tblproperties={'delta.enableDeletionVectors': 'false'} "
        "and rebuild them with --full-refresh, or run on Spark 4.1 or later.",
    ),
)


@dataclass(frozen=True, order=True)
class SparkVersion:
    """A Spark version as `major.minor.patch` (a suffix such as `.dev0` or `rc1` ignored)."""

    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> "SparkVersion":
        found = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", text.strip())
        if found is None:
            raise ValueError(f"not a Spark version: {text!r}")
        return cls(int(found[1]), int(found[2]), int(found[3] or 0))

    @property
    def minor_line(self) -> str:
        return f"{self.major}.{self.minor}"

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


def installed_spark() -> SparkVersion:
    """The PySpark installed beside the adapter (an embedded session's Spark), read from its
    package's metadata: importing pyspark would cost a start aid its own start."""
    return SparkVersion.parse(metadata.version("pyspark"))


def delta_package_for(spark: SparkVersion) -> str | None:
    """The Maven coordinate of Delta for `spark`, or None when no Delta release supports it."""
    if spark.minor_line not in SUPPORTED_SPARK:
        return None
    return f"io.delta:delta-spark_{spark.minor_line}_{SCALA_VERSION}:{DELTA_VERSION}"


def default_delta_package() -> str:
    """The Delta package of the installed PySpark; for one no Delta release supports, the
    newest (a session start then refuses it with `unsupported_spark`)."""
    newest = SparkVersion.parse(SUPPORTED_SPARK[-1])
    return delta_package_for(installed_spark()) or delta_package_for(newest) or ""


def unsupported_spark(spark: SparkVersion) -> str | None:
    """A sentence when the installed PySpark cannot run Delta, naming what to install."""
    if delta_package_for(spark) is not None:
        return None
    return (
        f"PySpark {spark} is installed, but Delta Lake {DELTA_VERSION} (the newest on Maven "
        f"Central) supports Spark {', '.join(SUPPORTED_SPARK)} only, so an embedded session "
        f"cannot read or write Delta tables. Install a supported PySpark (pip install "
        f"'pyspark>={SUPPORTED_SPARK[0]}.1,<{_after(SUPPORTED_SPARK[-1])}'), or connect to a "
        "Spark server of a supported version with method: connect or thrift."
    )


def _after(minor_line: str) -> str:
    major, minor = minor_line.split(".")
    return f"{major}.{int(minor) + 1}"


def accepted_keywords(function: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """The `options` that `function` takes as keywords in the installed version."""
    accepted = inspect.signature(function).parameters
    return {key: value for key, value in options.items() if key in accepted}


def grpc_status_name(error: BaseException) -> str | None:
    """The gRPC status (`UNAVAILABLE`, ...) an error carries: PySpark 4.1 and later keep it on
    their exception (getGrpcStatusCode), gRPC's own error has it as code()."""
    for reader in ("getGrpcStatusCode", "code"):
        read = getattr(error, reader, None)
        if not callable(read):
            continue
        try:
            name = getattr(read(), "name", None)
        except Exception:  # a code() of another kind of error, wanting arguments
            continue
        if isinstance(name, str):
            return name
    return None


def line_limit(text: str) -> str | None:
    """The sentence for a failure an older Spark line has (LINE_LIMITS), if `text` is one."""
    for words, sentence in LINE_LIMITS:
        if all(word in text for word in words):
            return sentence
    return None
