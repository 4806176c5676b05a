"""Which state a stream target's rows are, when a CLONE or RESTORE put them there.

A target's offsets are its consumer's newest stream commit in its history (commit.py). Two
Delta commands replace a table's rows with those of another state and leave no stream commit:

- CLONE, which `dbt clone` runs to copy a target into another schema: the rows are the cloned
  table's at `sourceVersion`;
- RESTORE TABLE ... TO VERSION AS OF v: the rows are the table's own at version v.

After either, the offsets the rows are at are those of the newest stream commit at or before
that state. Without this, a clone's first build took its streams for new (its schema's
registry knows none of them) and appended every source row again, and a restored target was
built on from the commit the restore had undone, so the changes that commit consumed were
never applied again.
"""

from dataclasses import dataclass

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.quoting import quote
from dbt.adapters.spark_streams.streams.sql.run import Row

# A clone of a clone of a restored table, and so on: more hops than this is a loop.
MAX_ORIGINS = 8


@dataclass(frozen=True)
class Origin:
    """The state a CLONE or RESTORE commit copied its rows from: `table` at `version`."""

    table: str
    version: int
    operation: str


def origin_of(row: Row, table: str, model: str) -> Origin | None:
    """The state a history row's CLONE or RESTORE copied; None for any other commit. A
    RESTORE to a timestamp names no version, so the offsets cannot be told: an error."""
    operation = str(row.get("operation") or "").upper()
    parameters = row.get("operationParameters") or {}
    if operation == "CLONE":
        source, version = parameters.get("source"), parameters.get("sourceVersion")
        if source and _is_version(version):
            return Origin(quote_table(str(source)), int(str(version)), "CLONE")
        raise _unknown_state(model, table, row, "a CLONE that names no source version")
    if operation == "RESTORE":
        version = parameters.get("version")
        if _is_version(version):
            return Origin(table, int(str(version)), "RESTORE")
        raise _unknown_state(model, table, row, "a RESTORE to a timestamp")
    return None


def quote_table(name: str) -> str:
    """`catalog`.`schema`.`table` for CLONE's unquoted `source` parameter (left as it is when
    it is already quoted or a path)."""
    if "`" in name or "/" in name:
        return name
    return ".".join(quote(part) for part in name.split("."))


def _is_version(value: object) -> bool:
    return value is not None and str(value).strip().isdigit()


def _unknown_state(model: str, table: str, row: Row, what: str) -> StreamError:
    return StreamError(
        f"Model {model}: its target {table} was rewritten by {what} (version "
        f"{row.get('version')}) since its last stream build, so the offsets its rows are at "
        "cannot be told. Rebuild it with --full-refresh (its streams start over), or restore a "
        "version: RESTORE TABLE "
        f"{table} TO VERSION AS OF <n>."
    )


def offsets_missing(model: str, target: str, origin: Origin) -> StreamError:
    """The error of a target copied from a state no stream commit of its model precedes."""
    return StreamError(
        f"Model {model}: its target {target} holds the rows of {origin.table} at version "
        f"{origin.version} ({origin.operation}), and that table's history shows no stream build "
        f"of {model} at or before that version (a build of another model, or history Delta has "
        "removed), so the offsets those rows are at cannot be told. Rebuild it with "
        "--full-refresh: its streams start over."
    )
