"""SQL for a stream's change records, read from Delta's Change Data Feed.

Every query reads `table_changes(source, start, end)` with explicit bounds, so what a build
reads is fixed when it is rendered. Row identity is the `unique_key` when there is one, and the
row's values (a multiset) when there is none.
"""

from dataclasses import dataclass

from dbt.adapters.spark_streams.streams.sql import column_list, quote, string_literal

METADATA_COLUMNS = (
    "metadata_action",
    "metadata_isupdate",
    "metadata_row_id",
    "metadata_commit_version",
    "metadata_commit_timestamp",
)

# Change types that carry the row as it was before a commit, and as it is after it.
BEFORE_TYPES = "('delete', 'update_preimage')"
AFTER_TYPES = "('insert', 'update_postimage')"
JSON_KEEP_NULLS = "map('ignoreNullFields', 'false')"


@dataclass(frozen=True)
class ChangeRange:
    """The versions of one source a stream read covers: start..end, both inclusive."""

    source: str
    columns: tuple[str, ...]
    unique_key: tuple[str, ...]
    start: int
    end: int

    @property
    def is_empty(self) -> bool:
        return self.start > self.end


@dataclass(frozen=True)
class Snapshot:
    """A source as of one version, for a new stream's initial rows."""

    source: str
    columns: tuple[str, ...]
    unique_key: tuple[str, ...]
    version: int
    timestamp: str


def _row_struct(columns: tuple[str, ...], prefix: str = "") -> str:
    fields = ", ".join(f"{string_literal(c)}, {prefix}{quote(c)}" for c in columns)
    return f"named_struct({fields})"


def key_hash(unique_key: tuple[str, ...], prefix: str = "") -> str:
    """Row id of a keyed row: the same for a key on every stream of the source."""
    return f"sha1(to_json({_row_struct(unique_key, prefix)}, {JSON_KEEP_NULLS}))"


def _feed(change: ChangeRange) -> str:
    return f"table_changes({string_literal(change.source)}, {change.start}, {change.end})"


def _output(row: str, action: str, isupdate: str, row_id: str, version: str, ts: str) -> str:
    return (
        f"{row}, {action} as metadata_action, {isupdate} as metadata_isupdate, "
        f"{row_id} as metadata_row_id, {version} as metadata_commit_version, "
        f"{ts} as metadata_commit_timestamp"
    )


def empty_sql(snapshot: Snapshot) -> str:
    """No rows, with the stream's columns: a stream with nothing pending."""
    return f"select * from ({initial_rows_sql(snapshot)}) where false"


def initial_rows_sql(snapshot: Snapshot) -> str:
    """Every row present at the snapshot's version, as an INSERT."""
    row = _row_struct(snapshot.columns)
    if snapshot.unique_key:
        row_id = key_hash(snapshot.unique_key)
    else:
        occurrence = (
            f"row_number() over (partition by to_json({row}, {JSON_KEEP_NULLS}) order by 1)"
        )
        row_id = f"sha1(concat(to_json({row}, {JSON_KEEP_NULLS}), '#', {occurrence}))"
    output = _output(
        column_list(snapshot.columns),
        "'INSERT'",
        "false",
        row_id,
        str(snapshot.version),
        f"timestamp{string_literal(snapshot.timestamp)}",
    )
    return f"select {output} from {snapshot.source} version as of {snapshot.version}"


def append_only_sql(change: ChangeRange) -> str:
    """Every row inserted in the range, as inserted, even if later changed or deleted."""
    row = _row_struct(change.columns)
    if change.unique_key:
        row_id = key_hash(change.unique_key)
    else:
        row_json = f"to_json({row}, {JSON_KEEP_NULLS})"
        occurrence = f"row_number() over (partition by {row_json}, _commit_version order by 1)"
        row_id = f"sha1(concat({row_json}, '#', _commit_version, '#', {occurrence}))"
    output = _output(
        column_list(change.columns),
        "'INSERT'",
        "false",
        row_id,
        "_commit_version",
        "_commit_timestamp",
    )
    return f"select {output} from {_feed(change)} where _change_type = 'insert'"


def keyed_net_sql(change: ChangeRange) -> str:
    """The net change per key: the row at the offset against the row at the pinned version.

    A key's state before the range is the row its first commit in the range deleted or
    updated (none if that commit inserted it); its state after is the row its last commit
    inserted or updated into (none if that commit deleted it). Equal states net out.

    One window per key (before-images sort first within a commit) finds both states, and one
    generator emits the DELETE and the INSERT half, so the change feed is read, shuffled and
    sorted once: the cost follows the change, as a hand-written MERGE's does.
    """
    row = _row_struct(change.columns)
    keys = column_list(change.unique_key)
    order = f"_commit_version, _change_type in {AFTER_TYPES}"
    key_json = f"to_json({_row_struct(change.unique_key, '_first.row.')}, {JSON_KEEP_NULLS})"
    output = _output(
        "_row.*",
        "_action",
        "_old is not null and _new is not null",
        f"sha1({key_json})",
        "_last.version",
        "_last.ts",
    )
    return f"""with _ends as (
  select first_value(named_struct('row', {row}, 'kept', _change_type in {BEFORE_TYPES}))
           over _key as _first,
         last_value(named_struct('row', {row}, 'kept', _change_type in {AFTER_TYPES}))
           over _key as _final,
         last_value(struct(_commit_version as version, _commit_timestamp as ts)) over _key
           as _last,
         row_number() over (partition by {keys} order by {order}) as _n
  from {_feed(change)}
  where _change_type in {BEFORE_TYPES} or _change_type in {AFTER_TYPES}
  window _key as (partition by {keys} order by {order}
                  rows between unbounded preceding and unbounded following)
), _paired as (
  select _first, _last, if(_first.kept, _first.row, null) as _old,
         if(_final.kept, _final.row, null) as _new
  from _ends where _n = 1
), _halves as (
  select *, if(_action = 'DELETE', _old, _new) as _row
  from _paired lateral view explode(array('DELETE', 'INSERT')) _halves as _action
  where _old is null or _new is null or not (_old <=> _new)
)
select {output} from _halves where _row is not null"""


def multiset_net_sql(change: ChangeRange) -> str:
    """The net change per distinct row value, by count: inserts minus deletes.

    Without a key an update is a delete of one value and an insert of another, so
    `metadata_isupdate` is always false and a row id is the value plus an occurrence number.
    """
    row = _row_struct(change.columns)
    row_id = f"sha1(concat(to_json(_row, {JSON_KEEP_NULLS}), '#', _occurrence))"
    output = _output(
        "_row.*",
        "case when _net > 0 then 'INSERT' else 'DELETE' end",
        "false",
        row_id,
        "_last.version",
        "_last.ts",
    )
    return f"""with _net as (
  select {row} as _row,
         sum(case when _change_type in {AFTER_TYPES} then 1 else -1 end) as _net,
         max(struct(_commit_version as version, _commit_timestamp as ts)) as _last
  from {_feed(change)}
  where _change_type in {BEFORE_TYPES} or _change_type in {AFTER_TYPES}
  group by 1
  having sum(case when _change_type in {AFTER_TYPES} then 1 else -1 end) <> 0
)
select {output} from _net lateral view explode(sequence(1, abs(_net))) _n as _occurrence"""


def net_changes_sql(change: ChangeRange) -> str:
    """The standard stream's minimal delta, by key when there is one."""
    return keyed_net_sql(change) if change.unique_key else multiset_net_sql(change)
