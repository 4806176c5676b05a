"""SQL for a stream's change records, read from Delta's Change Data Feed.

Every query reads `table_changes(source, start, end)` with explicit bounds, so what a build
reads is fixed when it is rendered. Row identity is the `unique_key` when there is one, and the
row's values (a multiset) when there is none.

Rows are compared as Spark compares them, except where Spark cannot (maps and variants, and
structs and arrays holding them): there on a canonical form (column_types.py), while the
output keeps the original values. Row ids hash the canonical form, so equal rows share one.
"""

from dataclasses import dataclass

from dbt.adapters.spark_streams.streams.records.column_types import (
    ColumnType,
    canonical,
    canonical_fields,
    comparable,
    row_type,
    unordered,
)
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote, string_literal

METADATA_COLUMNS = (
    "metadata_action",
    "metadata_isupdate",
    "metadata_row_id",
    "metadata_commit_version",
    "metadata_commit_timestamp",
)

# The mode a history consumer reads a standard stream in: every version, not netted.
VERSIONS = "versions"

# Change types that carry the row as it was before a commit, and as it is after it.
BEFORE_TYPES = "('delete', 'update_preimage')"
AFTER_TYPES = "('insert', 'update_postimage')"
JSON_KEEP_NULLS = "map('ignoreNullFields', 'false')"


class _Typed:
    """The row and key types of a read, from its columns' catalog strings (DESCRIBE's
    data_type, one per column). Without them every column counts as orderable."""

    columns: tuple[str, ...]
    unique_key: tuple[str, ...]
    column_types: tuple[str, ...]

    @property
    def row_type(self) -> ColumnType:
        return row_type(self.columns, self.column_types)

    @property
    def key_type(self) -> ColumnType:
        return row_type(self.columns, self.column_types, self.unique_key)


@dataclass(frozen=True)
class ChangeRange(_Typed):
    """The versions of one source a stream read covers: start..end, both inclusive."""

    source: str
    columns: tuple[str, ...]
    unique_key: tuple[str, ...]
    start: int
    end: int
    column_types: tuple[str, ...] = ()
    location: str = ""  # the table's path: the change read names it by path (see _feed)
    feed: str = ""  # a query in the change feed's shape read instead (a view's changes)

    @property
    def is_empty(self) -> bool:
        return self.start > self.end


@dataclass(frozen=True)
class Snapshot(_Typed):
    """A source as of one version, for a new stream's initial rows."""

    source: str
    columns: tuple[str, ...]
    unique_key: tuple[str, ...]
    version: int
    timestamp: str
    column_types: tuple[str, ...] = ()
    location: str = ""
    relation: str = ""  # a query of the rows instead of the source as of `version` (a view)

    @property
    def rows(self) -> str:
        """The snapshot's rows: the source as of its version, or its `relation`."""
        if self.relation:
            return f"({self.relation}) as _snapshot"
        return f"{self.source} version as of {self.version}"


def row_struct(columns: tuple[str, ...], prefix: str = "") -> str:
    fields = ", ".join(f"{string_literal(c)}, {prefix}{quote(c)}" for c in columns)
    return f"named_struct({fields})"


def row_json_sql(row: ColumnType, prefix: str = "") -> str:
    """The JSON of a row's canonical form, which row ids hash: for a row of ordinary columns
    (no map, variant or float) this is the JSON of the row itself."""
    return f"to_json(named_struct({canonical_fields(row, prefix)}), {JSON_KEEP_NULLS})"


def key_hash(key: ColumnType, prefix: str = "") -> str:
    """Row id of a keyed row: the same for a key on every stream of the source."""
    return f"sha1({row_json_sql(key, prefix)})"


def _same(row: ColumnType, old: str, new: str) -> str:
    """Whether two row structs are equal: `<=>`, on the canonical form where Spark has no
    ordering for a column's type."""
    return f"{comparable(old, row)} <=> {comparable(new, row)}"


def feed_sql(change: ChangeRange) -> str:
    """The change feed of the range. By path when the location is known: Spark's analyzer
    caches relations by table name within a statement, so a query that also reads the table
    by name (a model joining a stream with its source, a test comparing them) could get the
    plain table where table_changes(name, ...) stands, and fail on `_change_type`. A view's
    changes come as a query of that shape (view_changes.py)."""
    if change.feed:
        return f"({change.feed})"
    if change.location:
        path = string_literal(change.location)
        return f"table_changes_by_path({path}, {change.start}, {change.end})"
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
    if snapshot.unique_key:
        row_id = key_hash(snapshot.key_type)
    else:
        row_json = row_json_sql(snapshot.row_type)
        occurrence = f"row_number() over (partition by {row_json} order by 1)"
        row_id = f"sha1(concat({row_json}, '#', {occurrence}))"
    output = _output(
        column_list(snapshot.columns),
        "'INSERT'",
        "false",
        row_id,
        f"cast({snapshot.version} as bigint)",  # the type of a change feed's _commit_version
        f"timestamp{string_literal(snapshot.timestamp)}",
    )
    return f"select {output} from {snapshot.rows}"


def append_only_sql(change: ChangeRange) -> str:
    """Every row inserted in the range, as inserted, even if later changed or deleted."""
    if change.unique_key:
        row_id = key_hash(change.key_type)
    else:
        row_json = row_json_sql(change.row_type)
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
    return f"select {output} from {feed_sql(change)} where _change_type = 'insert'"


def versions_sql(change: ChangeRange) -> str:
    """Every version of a row committed in the range, in commit order and not netted, for the
    history strategy: inserts and update post-images as INSERTs (an update's with
    metadata_isupdate), deletes as DELETEs. An update that changed nothing is left out: within
    a commit, as many post-images of a value as there are pre-images of that same value (the
    key is part of the value) are dropped, which needs no key. An update that changed a row's
    key deletes the old key: its pre-image, when no post-image of the commit holds that key,
    is a DELETE."""
    value = row_json_sql(change.row_type)
    key = row_json_sql(change.key_type) if change.unique_key else value
    occurrence = (
        "row_number() over (partition by _commit_version, _value, _change_type order by 1)"
    )
    unchanged = (
        "count_if(_change_type = 'update_preimage') over (partition by _commit_version, _value)"
    )
    kept = "count_if(_change_type = 'update_postimage') over (partition by _commit_version, _key)"
    row_id = "sha1(concat(_value, '#', _commit_version, '#', _change_type, '#', _occurrence))"
    output = _output(
        column_list(change.columns),
        "case when _change_type in ('delete', 'update_preimage') then 'DELETE' else 'INSERT' end",
        "_change_type = 'update_postimage'",
        row_id,
        "_commit_version",
        "_commit_timestamp",
    )
    return f"""select {output} from (
  select *, {occurrence} as _occurrence, {unchanged} as _unchanged, {kept} as _kept
  from (select *, {value} as _value, {key} as _key from {feed_sql(change)})
)
where _change_type in ('insert', 'delete')
   or (_change_type = 'update_postimage' and _occurrence > _unchanged)
   or (_change_type = 'update_preimage' and _kept = 0)"""


def keyed_net_sql(change: ChangeRange) -> str:
    """The net change per key: the row at the offset against the row at the pinned version.

    A key's state before the range is the row its first commit in the range deleted or
    updated (none if that commit inserted it); its state after is the row its last commit
    inserted or updated into (none if that commit deleted it). Equal states net out.

    One window per key (before-images sort first within a commit) finds both states, and one
    generator emits the DELETE and the INSERT half, so the change feed is read, shuffled and
    sorted once: the cost follows the change, as a hand-written MERGE's does.
    """
    row = row_struct(change.columns)
    keys = ", ".join(comparable(quote(name), kind) for name, kind in change.key_type.fields)
    order = f"_commit_version, _change_type in {AFTER_TYPES}"
    paired = f"""with _ends as (
  select first_value(named_struct('row', {row}, 'kept', _change_type in {BEFORE_TYPES}))
           over _key as _first,
         last_value(named_struct('row', {row}, 'kept', _change_type in {AFTER_TYPES}))
           over _key as _final,
         last_value(struct(_commit_version as version, _commit_timestamp as ts)) over _key
           as _last,
         row_number() over (partition by {keys} order by {order}) as _n
  from {feed_sql(change)}
  where _change_type in {BEFORE_TYPES} or _change_type in {AFTER_TYPES}
  window _key as (partition by {keys} order by {order}
                  rows between unbounded preceding and unbounded following)
), _paired as (
  select _first, _last, if(_first.kept, _first.row, null) as _old,
         if(_final.kept, _final.row, null) as _new
  from _ends where _n = 1
)"""
    changed = f"_old is null or _new is null or not ({_same(change.row_type, '_old', '_new')})"
    return _halves_sql(paired, key_hash(change.key_type, "_first.row."), changed)


def _halves_sql(paired: str, row_id: str, changed: str = "true") -> str:
    """The stream rows of keyed pairs: `paired` is CTEs ending in `_paired` (one row per key:
    `_old` and `_new`, either null, and `_last`); a pair gives a DELETE of `_old` and an
    INSERT of `_new` (an update when both exist), for the keys where `changed` holds."""
    output = _output(
        "_row.*",
        "_action",
        "_old is not null and _new is not null",
        row_id,
        "_last.version",
        "_last.ts",
    )
    return f"""{paired}, _halves as (
  select *, if(_action = 'DELETE', _old, _new) as _row
  from _paired lateral view explode(array('DELETE', 'INSERT')) _halves as _action
  where {changed}
)
select {output} from _halves where _row is not null"""


def multiset_net_sql(change: ChangeRange) -> str:
    """The net change per distinct row value, by count: inserts minus deletes.

    Without a key an update is a delete of one value and an insert of another, so
    `metadata_isupdate` is always false and a row id is the value plus an occurrence number.
    Rows group by their values, or by their canonical form where Spark cannot group the
    values themselves (any one of a group's equal values is then the output).
    """
    grouped, row_json = _multiset_group(change.row_type, row_struct(change.columns))
    row_id = f"sha1(concat({row_json}, '#', _occurrence))"
    output = _output(
        "_row.*",
        "case when _net > 0 then 'INSERT' else 'DELETE' end",
        "false",
        row_id,
        "_last.version",
        "_last.ts",
    )
    return f"""with _net as (
  select {grouped},
         sum(case when _change_type in {AFTER_TYPES} then 1 else -1 end) as _net,
         max(struct(_commit_version as version, _commit_timestamp as ts)) as _last
  from {feed_sql(change)}
  where _change_type in {BEFORE_TYPES} or _change_type in {AFTER_TYPES}
  group by 1
  having sum(case when _change_type in {AFTER_TYPES} then 1 else -1 end) <> 0
)
select {output} from _net lateral view explode(sequence(1, abs(_net))) _n as _occurrence"""


def keyed_value_net_sql(change: ChangeRange) -> str:
    """The net change per key when the feed's rows may cancel in any order (a view's terms,
    view_changes.py): rows net by value first, then each key's removed and added value pair
    into an update. A key with more than one of either is not unique in the view: the read
    fails, naming the stream's source, rather than pair rows at random."""
    grouped, _ = _multiset_group(change.row_type, row_struct(change.columns))
    keys = ", ".join(
        comparable(f"_row.{quote(name)}", kind) for name, kind in change.key_type.fields
    )
    not_unique = string_literal(
        f"unique_key ({', '.join(change.unique_key)}) is not unique in {change.source}: a key "
        "has two rows in the view. Name columns that are unique in the view, or no unique_key."
    )
    sign = f"case when _change_type in {AFTER_TYPES} then 1 else -1 end"
    paired = f"""with _net as (
  select {grouped}, sum({sign}) as _net,
         max(struct(_commit_version as version, _commit_timestamp as ts)) as _last
  from {feed_sql(change)}
  where _change_type in {BEFORE_TYPES} or _change_type in {AFTER_TYPES}
  group by 1 having sum({sign}) <> 0
), _paired as (
  select if(max(abs(_net)) > 1 or count_if(_net < 0) > 1 or count_if(_net > 0) > 1,
            raise_error({not_unique}), first(if(_net < 0, _row, null), true)) as _old,
         first(if(_net > 0, _row, null), true) as _new, max(_last) as _last
  from _net group by {keys}
)"""
    return _halves_sql(paired, key_hash(change.key_type, "_row."))


def _multiset_group(row: ColumnType, values: str) -> tuple[str, str]:
    """The keyless netting's group (its first select item is the key) and the row's JSON."""
    if not unordered(row):
        return f"{values} as _row", f"to_json({canonical('_row', row)}, {JSON_KEEP_NULLS})"
    key = f"named_struct({canonical_fields(row)})"
    return f"{key} as _key, any_value({values}) as _row", f"to_json(_key, {JSON_KEEP_NULLS})"


def net_changes_sql(change: ChangeRange) -> str:
    """The standard stream's minimal delta, by key when there is one."""
    if not change.unique_key:
        return multiset_net_sql(change)
    return keyed_value_net_sql(change) if change.feed else keyed_net_sql(change)


def changes_between(mode: str, snapshot: Snapshot, first: int) -> str:
    """The stream rows of `mode` for the source's changes from version `first` up to the
    snapshot's version: netted (standard), every insert (append_only) or every version
    (VERSIONS, for a history consumer)."""
    change = ChangeRange(
        snapshot.source,
        snapshot.columns,
        snapshot.unique_key,
        first,
        snapshot.version,
        snapshot.column_types,
        snapshot.location,
    )
    if change.is_empty:
        return empty_sql(snapshot)
    if mode == "append_only":
        return append_only_sql(change)
    if mode == VERSIONS:
        return versions_sql(change)
    return net_changes_sql(change)
