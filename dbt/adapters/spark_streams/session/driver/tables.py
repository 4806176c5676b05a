"""What the driver's readers (history.py, detail.py) share: a plain statement's table name,
the Delta table it names in the session catalog and its newest snapshot, and the refusal that
leaves a statement to Spark, whose answer and error messages stay the reference."""

import re
from collections.abc import Callable
from typing import Any

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.spark_streams.session.driver.java import TABLE_IDENTIFIER, java_class

NAME_PART = r"(?:`[^`]+`|\w+)"
TABLE_NAME = rf"(?P<name>{NAME_PART}(?:\.{NAME_PART}){{0,2}})"
# One /* */ comment, ending at its first */ (so that a long statement is not searched again
# for other ways to split its comments: every statement the cursor runs is matched). dbt's
# query comment goes before the statement, or after it with `query-comment: append`.
COMMENT = r"/\*(?:[^*]|\*(?!/))*\*/"
LEADING, TRAILING = rf"\s*(?:{COMMENT}\s*)*", rf"\s*(?:{COMMENT}\s*)*;?\s*"
SESSION_CATALOG = "spark_catalog"
DELTA = "org.apache.spark.sql.delta"


class LeaveToSpark(Exception):
    """The statement is not one the driver answers exactly as Delta would: Spark runs it."""


# What a reader does with a statement it takes: (session, its py4j view, the JVM's session,
# the statement's match) to the rows, or LeaveToSpark.
Reader = Callable[[SparkSession, Any, Any, re.Match[str]], DataFrame]


def driver_answer(
    session: SparkSession, pattern: re.Pattern[str], sql: str, read: Reader
) -> DataFrame | None:
    """The rows `read` gives for `sql` when `pattern` takes it on a session with a JVM; None
    when Spark must run the statement itself (and raise its own error if there is one)."""
    match = pattern.fullmatch(sql)
    jsession = getattr(session, "_jsparkSession", None)  # None on Spark Connect
    jvm = getattr(session, "_jvm", None)
    if match is None or jsession is None or jvm is None:
        return None
    try:
        return read(session, jvm, jsession, match)
    except (LeaveToSpark, Py4JError, PySparkException):
        return None


def plain_statement(words: str, rest: str = "") -> re.Pattern[str]:
    """The plain form `<words> <table name><rest>`, with dbt's comments around it."""
    return re.compile(rf"{LEADING}{words}\s+{TABLE_NAME}{rest}{TRAILING}", re.IGNORECASE)


def name_parts(name: str) -> list[str]:
    """The parts of a dotted table name, backquotes removed."""
    return [part.strip("`") for part in re.findall(NAME_PART, name)]


def delta_table(jvm: Any, jsession: Any, parts: list[str]) -> Any:
    """The catalog entry of a Delta table named by `parts` in the session catalog."""
    state = jsession.sessionState()
    if len(parts) == 3:
        catalog, *parts = parts
        if catalog.lower() != SESSION_CATALOG:
            raise LeaveToSpark
    elif state.catalogManager().currentCatalog().name() != SESSION_CATALOG:
        raise LeaveToSpark
    identifier = table_identifier(jvm, parts[-1], parts[0] if len(parts) == 2 else None)
    catalog = state.catalog()
    if catalog.isTempView(identifier):
        raise LeaveToSpark  # Spark refuses a view: its error says so
    table = catalog.getTableMetadata(identifier)  # a missing table: Spark's error says so
    provider = table.provider()
    if not provider.isDefined() or provider.get().lower() != "delta":
        raise LeaveToSpark
    return table


def table_identifier(jvm: Any, name: str, schema: str | None) -> Any:
    """Spark's TableIdentifier of `name`, in `schema` or in none."""
    in_schema = java_class(jvm, "scala.Some")(schema) if schema is not None else scala_none(jvm)
    return java_class(jvm, TABLE_IDENTIFIER)(name, in_schema)


def newest_snapshot(jvm: Any, jsession: Any, table: Any) -> tuple[Any, Any]:
    """The table's DeltaLog and its snapshot brought up to date, as Delta's commands take them
    (`deltaLog.update(catalogTableOpt = table)`)."""
    log = java_class(jvm, f"{DELTA}.DeltaLog").forTable(jsession, table)
    if not log.tableExists():
        raise LeaveToSpark
    return log, log.update(False, scala_none(jvm), java_class(jvm, "scala.Some")(table))


def scala_none(jvm: Any) -> Any:
    """Scala's None, for Option parameters."""
    return java_class(jvm, "scala.None$").__getattr__("MODULE$")
