"""A dbt unit test's rows read as a stream's change records.

In a unit test, `source()` and `ref()` stand for a fixture: the rows the test gives, as a CTE.
A stream over it reads those rows as the change records of one build: each is an INSERT of a
new row (not an update), with a row id and no commit, unless the fixture gives the metadata
columns itself (a DELETE, an update's two halves, a commit version). Nothing is read from the
source and nothing is consumed: the test checks the model's SELECT, not the stream.
"""

from collections.abc import Collection

from dbt.adapters.spark_streams.streams.records.netting import JSON_KEEP_NULLS, METADATA_COLUMNS
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote, string_literal

# The change records' metadata columns with their types, as a stream returns them.
CHANGE_COLUMN_TYPES = dict(
    zip(METADATA_COLUMNS, ("string", "boolean", "string", "bigint", "timestamp"), strict=True)
)
# What a row that gives no metadata is: an insert of a new row, in no commit.
DEFAULTS = {
    "metadata_action": "'INSERT'",
    "metadata_isupdate": "false",
    "metadata_commit_version": "cast(null as bigint)",
    "metadata_commit_timestamp": "cast(null as timestamp)",
}
ROW_JSON = "_dbt_spark_streams_row_json"


def given_change_columns(columns: Collection[str]) -> frozenset[str]:
    """The metadata columns among a fixture's columns (any case)."""
    return frozenset(c.lower() for c in columns) & frozenset(METADATA_COLUMNS)


def fixture_change_records_sql(
    relation: str, given: Collection[str], unique_key: tuple[str, ...]
) -> str:
    """The change records of the fixture `relation`, whose metadata columns `given` (if any)
    are kept where a row has a value. A row without a row id gets one as a stream would: the
    hash of its key, or of its values and its occurrence among equal rows when there is no
    key (so both halves of an update share an id, and equal rows do not)."""
    given = given_change_columns(given)
    outputs = [_output(column, given, unique_key) for column in METADATA_COLUMNS]
    dropped = column_list(sorted({*given, ROW_JSON}))
    data = f"struct(* except ({column_list(sorted(given))}))" if given else "struct(*)"
    return (
        f"(select * except ({dropped}), {', '.join(outputs)} from ("
        f"select *, to_json({data}, {JSON_KEEP_NULLS}) as {ROW_JSON} from {relation}))"
    )


def _output(column: str, given: frozenset[str], unique_key: tuple[str, ...]) -> str:
    default = DEFAULTS.get(column) or _row_id(unique_key)
    value = f"coalesce({quote(column)}, {default})" if column in given else default
    return f"{value} as {quote(column)}"


def _row_id(unique_key: tuple[str, ...]) -> str:
    if unique_key:
        fields = ", ".join(f"{string_literal(name)}, {quote(name)}" for name in unique_key)
        return f"sha1(to_json(named_struct({fields}), {JSON_KEEP_NULLS}))"
    occurrence = f"row_number() over (partition by {ROW_JSON} order by {ROW_JSON})"
    return f"sha1(concat({ROW_JSON}, '#', {occurrence}))"


def fixture_system_time_sql(relation: str) -> str:
    """The fixture's rows as the rows valid at the time asked: a fixture has no history, so
    their system-time period (_sys_start, _sys_end) is unknown."""
    unknown = "cast(null as timestamp)"
    return f"(select *, {unknown} as _sys_start, {unknown} as _sys_end from {relation})"
