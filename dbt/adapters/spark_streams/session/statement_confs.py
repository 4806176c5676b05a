"""A build's write confs set through the session's conf API instead of SQL SET / RESET.

Each dbt connection has a Spark session of its own (connections.py), so a conf set on it is
seen by that connection's statements only, and setting it directly is as scoped as a SET. It
spares a build eight SQL statements (four SETs, four RESETs), each planned by Spark and logged
by dbt, and it works over Spark Connect too (`conf.set` is a request to the server). What a
key held before the write (a user's own SET in a pre-hook, say) is put back afterwards.
"""

from dbt.adapters.events.logging import AdapterLogger
from pyspark.sql import SparkSession

from dbt.adapters.spark_streams.session.errors import readable_spark_errors
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql, RunWithConfs

logger = AdapterLogger("SparkStreams")


def session_confs(session: SparkSession, run: RunSql) -> RunWithConfs:
    """A RunWithConfs that sets the confs on `session` around the statement `run` runs."""

    def run_with_confs(statement: str, confs: dict[str, str]) -> list[Row]:
        with readable_spark_errors():
            previous = {key: session.conf.get(key, None) for key in confs}
            for key, value in confs.items():
                session.conf.set(key, value)
        logger.debug(f"Session confs for the next statement: {confs}")
        try:
            return run(statement)
        finally:
            with readable_spark_errors():
                restore_confs(session, previous)

    return run_with_confs


def restore_confs(session: SparkSession, previous: dict[str, str | None]) -> None:
    """Put each key back as it was: unset where it was not set."""
    for key, value in previous.items():
        if value is None:
            session.conf.unset(key)
        else:
            session.conf.set(key, value)
