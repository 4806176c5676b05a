"""A view's changes from its tables' change sets, without evaluating the view twice.

A validated view (view_rules.py) is a sum of branches (UNION ALL), each a filtered projection
of a join of table references T1..Tn. Such a query is linear in each reference, so the change
between the tables' offsets (old) and pins (new) telescopes:

    V(new1..newn) - V(old1..oldn) = sum over i of V(new1..new(i-1), dTi, old(i+1)..oldn)

where dTi is Ti's signed change set between its offset and its pin (inserts and post-images
count +1, deletes and pre-images -1) and only the branches that read Ti take part in term i
(the others cancel). For two tables this is the seed's dA x B0 + A1 x dB, the same as
dA x B0 + A0 x dB + dA x dB. A table joined to itself is two references.

Each term is the view's own query with its table references replaced, read once: dTi's rows
carry their sign in an extra column, which every projection between dTi and the view's output
passes up, so a view row comes out as an insert (+1) or a delete (-1) and the other tables are
scanned once per term. Rows of the view that appear in one term and vanish in another (a join
of a new order with a customer's old name, say) cancel when the rows are netted, as every
stream's rows are.

An append_only view stream reports the view rows that involve at least one row inserted since
the offset, joined with the other tables at their offsets plus their inserts (the seed's
rule): the same sum with every table's "new" state its offset plus its inserts, and inserts
as its only change, so updates and deletes never show.
"""

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from dbt.adapters.spark_streams.streams.delta.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.records.netting import (
    AFTER_TYPES,
    BEFORE_TYPES,
    ChangeRange,
    feed_sql,
)
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote, string_literal
from dbt.adapters.spark_streams.streams.views.definition import DIALECT, ViewDefinition
from dbt.adapters.spark_streams.streams.views.pruning import Prunes

SIGN = "_spark_streams_sign"
SIGNS = (("insert", AFTER_TYPES), ("delete", BEFORE_TYPES))
INSERTS_ONLY = (("insert", "('insert')"),)


@dataclass(frozen=True)
class TableInterval:
    """One base table of a view read: its changes after `offset`, up to and with `pin`."""

    table: SourceTable
    offset: int
    pin: SourceVersion

    @property
    def changed(self) -> bool:
        return self.pin.version > self.offset


def view_feed_sql(
    view: ViewDefinition,
    intervals: dict[str, TableInterval],
    append_only: bool = False,
    prunes: dict[int, Prunes] | None = None,
) -> str:
    """The view's signed changes as a change feed: its columns (named as the catalog names
    them), `_change_type` ('insert' or 'delete'), and the pinned version and commit time of
    the table whose change produced the row as `_commit_version` / `_commit_timestamp`.
    `prunes` holds, per term, predicates on the other tables' scans (pruning.py)."""
    columns = column_list(view.columns)
    terms = []
    for index, name in enumerate(view.tables):
        interval = intervals[name]
        if not interval.changed:
            continue
        stamp = (
            f"cast({interval.pin.version} as bigint) as _commit_version, "
            f"timestamp{string_literal(interval.pin.timestamp_text)} as _commit_timestamp"
        )
        term_prunes = (prunes or {}).get(index, {})
        signed = _term(view, index, intervals, append_only, None, term_prunes)
        if signed is not None:
            change_type = f"case when {SIGN} > 0 then 'insert' else 'delete' end"
            terms.append(
                f"select {columns}, {change_type} as _change_type, {stamp} "
                f"from ({signed}) as _term({columns}, {SIGN})"
            )
            continue
        for change_type, images in INSERTS_ONLY if append_only else SIGNS:
            query = _term(view, index, intervals, append_only, images, term_prunes)
            terms.append(
                f"select {columns}, {string_literal(change_type)} as _change_type, {stamp} "
                f"from ({query}) as _term({columns})"
            )
    if not terms:
        return (
            f"select *, 'insert' as _change_type, cast(null as bigint) as _commit_version, "
            f"cast(null as timestamp) as _commit_timestamp from "
            f"({view_state_sql(view, intervals, pinned=True)}) as _term({columns}) "
            "where false"
        )
    return "\nunion all\n".join(terms)


def view_state_sql(view: ViewDefinition, intervals: dict[str, TableInterval], pinned: bool) -> str:
    """The view's rows with every table at its pin (or, `pinned` false, at its offset)."""
    query = view.query.copy()
    for table, name in zip(list(query.find_all(exp.Table, bfs=False)), view.tables, strict=True):
        interval = intervals[name]
        _swap(table, _version_sql(name, interval.pin.version if pinned else interval.offset))
    return query.sql(dialect=DIALECT, identify=True)


def view_change_range(
    view: ViewDefinition,
    unique_key: tuple[str, ...],
    intervals: dict[str, TableInterval],
    append_only: bool = False,
    prunes: dict[int, Prunes] | None = None,
) -> ChangeRange:
    """The view's changes as the range the netting reads (its feed is the view's signed rows,
    or for append_only its inserted ones)."""
    versions = [interval.pin.version for interval in intervals.values()]
    return ChangeRange(
        source=view.name,
        columns=view.columns,
        unique_key=unique_key,
        start=0,
        end=max(versions, default=0),
        feed=view_feed_sql(view, intervals, append_only, prunes),
    )


def _term(
    view: ViewDefinition,
    index: int,
    intervals: dict[str, TableInterval],
    append_only: bool,
    images: str | None,
    prunes: Prunes,
) -> str | None:
    """Term `index` of the sum: references before it at their pins (append_only: offsets plus
    inserts), it as its change rows, those after it at their offsets, each other reference
    filtered by its predicate in `prunes`; UNION ALL branches without it read nothing.
    `images` None: all its change rows, signed in a last column (None when a `*` projection
    would carry the sign to the wrong place); else the rows of those change types."""
    query = view.query.copy()
    references = list(query.find_all(exp.Table, bfs=False))
    changed: exp.Expr = references[index]
    for position, (table, name) in enumerate(zip(references, view.tables, strict=True)):
        interval = intervals[name]
        if position == index:
            rows = _signed_rows_sql(interval, append_only) if images is None else (
                _change_rows_sql(interval, images)
            )  # fmt: skip
            changed = _swap(table, rows)
        elif position < index and append_only:
            grown = f"{_version_sql(name, interval.offset)} union all "
            grown += _change_rows_sql(interval, "('insert')")
            where = prunes.get(position)
            _swap(table, f"select * from ({grown}) where {where}" if where else grown)
        else:
            version = interval.pin.version if position < index else interval.offset
            _swap(table, _version_sql(name, version, prunes.get(position)))
    _silence_other_branches(changed, query, signed=images is None)
    if images is None and not _pass_sign_up(changed, query):
        return None
    return query.sql(dialect=DIALECT, identify=True)


def _silence_other_branches(relation: exp.Expr, query: exp.Expr, signed: bool) -> None:
    """Every UNION ALL branch above `relation` that does not hold it made to read nothing (its
    term is zero). The branch stays, so the union keeps its first branch's column names, which
    the view's projection reads by name; Spark prunes it."""
    node = relation
    while node is not query:
        parent = node.parent
        assert parent is not None, "the relation is inside the query"
        if isinstance(parent, exp.Union):
            other = parent.expression if node is parent.this else parent.this
            alias = exp.TableAlias(this=exp.to_identifier("_silent"))
            silent = exp.select("*").from_(exp.Subquery(this=other.copy(), alias=alias))
            if signed:
                silent = silent.select(exp.alias_(exp.Literal.number(0), SIGN, quoted=True))
            other.replace(silent.where(exp.false()))
        node = parent


def _pass_sign_up(relation: exp.Expr, query: exp.Expr) -> bool:
    """Append the sign column to every projection between `relation` and the query's output,
    so it is the last column of each; False (nothing changed) when one of them passes the
    relation through a `*`, which would put the sign among the other columns."""
    path = []
    node = relation
    while node is not query:
        parent = node.parent
        assert parent is not None, "the relation is inside the query"
        if isinstance(parent, exp.Select) and isinstance(node, (exp.From, exp.Join)):
            if _passes_all(parent, node.this.alias_or_name):
                return False
            path.append(parent)
        node = parent
    for select in path:  # only this relation has the column: its bare name is unambiguous
        select.select(exp.column(SIGN, quoted=True), copy=False)
    return True


def _passes_all(select: exp.Select, alias: str) -> bool:
    """Whether the projection passes every column of the relation named `alias`."""
    return any(
        isinstance(projection, exp.Star)
        or (
            isinstance(projection, exp.Column)
            and isinstance(projection.this, exp.Star)
            and projection.table.lower() == alias.lower()
        )
        for projection in select.expressions
    )


def _version_sql(name: str, version: int, where: str | None = None) -> str:
    scan = f"select * from {name} version as of {version}"
    return f"{scan} where {where}" if where else scan


def change_rows_sql(interval: TableInterval) -> str:
    """Every change row of the table in the interval, with the feed's columns."""
    return f"select * from {_feed(interval)}"


def _change_rows_sql(interval: TableInterval, images: str) -> str:
    """The table's change rows of some types, with the table's own columns only."""
    return f"select {_own_columns(interval)} from {_feed(interval)} where _change_type in {images}"


def _signed_rows_sql(interval: TableInterval, append_only: bool) -> str:
    """The table's change rows with their sign: new images +1, old images -1 (append_only: its
    inserts, +1)."""
    if append_only:
        inserts = f"{_feed(interval)} where _change_type = 'insert'"
        return f"select {_own_columns(interval)}, 1 as {SIGN} from {inserts}"
    sign = f"case when _change_type in {AFTER_TYPES} then 1 else -1 end as {SIGN}"
    return f"select {_own_columns(interval)}, {sign} from {_feed(interval)}"


def _own_columns(interval: TableInterval) -> str:
    return ", ".join(quote(column) for column in interval.table.columns)


def _feed(interval: TableInterval) -> str:
    change = ChangeRange(
        interval.table.name, interval.table.columns, (), interval.offset + 1,
        interval.pin.version, interval.table.column_types, interval.table.location,
    )  # fmt: skip
    return feed_sql(change)


def _swap(table: exp.Table, relation_sql: str) -> exp.Expr:
    """Replace a table reference with a subquery under the same alias; the subquery."""
    alias = table.alias or table.name
    relation = sqlglot.parse_one(relation_sql, read=DIALECT)
    subquery = exp.Subquery(this=relation, alias=exp.TableAlias(this=exp.to_identifier(alias)))
    table.replace(subquery)
    return subquery


TABLE_STREAM_SEPARATOR = "@"


def table_stream_name(stream: str, table: str) -> str:
    """The name of the table stream that keeps a view stream's offset on one base table."""
    return f"{stream}{TABLE_STREAM_SEPARATOR}{table.replace('`', '')}"
