"""A view's changes from its tables' change sets, without evaluating the view twice.

A validated view (view_rules.py) is a sum of branches (UNION ALL), each a filtered projection
of a join of table references T1..Tn. Such a query is linear in each reference, so the change
between the tables' offsets (old) and pins (new) telescopes:

    V(new1..newn) - V(old1..oldn) = sum over i of V(new1..new(i-1), dTi, old(i+1)..oldn)

where dTi is Ti's signed change set between its offset and its pin (inserts and post-images
count +1, deletes and pre-images -1) and only the branches that read Ti take part in term i
(the others cancel). For two tables this is the seed's dA x B0 + A1 x dB, the same as
dA x B0 + A0 x dB + dA x dB. A table joined to itself is two references.

Each term is the view's own query with its table references replaced, run twice: once with
dTi's positive rows (its rows come out as inserts) and once with its negative rows (deletes).
Rows of the view that appear in one term and vanish in another (a join of a new order with a
customer's old name, say) cancel when the rows are netted, as every stream's rows are.

An append_only view stream reports the view rows that involve at least one row inserted since
the offset, joined with the other tables at their offsets plus their inserts (the seed's
rule): the same sum with every table's "new" state its offset plus its inserts, and inserts
as its only change, so updates and deletes never show.
"""

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from dbt.adapters.spark_streams.streams.changes import (
    AFTER_TYPES,
    BEFORE_TYPES,
    ChangeRange,
    feed_sql,
)
from dbt.adapters.spark_streams.streams.quoting import column_list, quote, string_literal
from dbt.adapters.spark_streams.streams.source import SourceTable, SourceVersion
from dbt.adapters.spark_streams.streams.view_definition import DIALECT, ViewDefinition

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
    view: ViewDefinition, intervals: dict[str, TableInterval], append_only: bool = False
) -> str:
    """The view's signed changes as a change feed: its columns (named as the catalog names
    them), `_change_type` ('insert' or 'delete'), and the pinned version and commit time of
    the table whose change produced the row as `_commit_version` / `_commit_timestamp`."""
    columns = column_list(view.columns)
    terms = []
    for index, name in enumerate(view.tables):
        interval = intervals[name]
        if not interval.changed:
            continue
        for change_type, images in INSERTS_ONLY if append_only else SIGNS:
            query = _term(view, index, intervals, images, append_only)
            terms.append(
                f"select *, {string_literal(change_type)} as _change_type, "
                f"cast({interval.pin.version} as bigint) as _commit_version, "
                f"timestamp{string_literal(interval.pin.timestamp_text)} as _commit_timestamp "
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
        feed=view_feed_sql(view, intervals, append_only),
    )


def _term(
    view: ViewDefinition,
    index: int,
    intervals: dict[str, TableInterval],
    images: str,
    append_only: bool,
) -> str:
    """Term `index` of the sum: references before it at their pins (append_only: offsets plus
    inserts), it as its positive (or negative) change rows, those after it at their offsets;
    branches without it dropped."""
    query = view.query.copy()
    references = list(query.find_all(exp.Table, bfs=False))
    query = _keep_branches_of(query, references[index])
    kept = {id(node) for node in query.find_all(exp.Table)}
    for position, (table, name) in enumerate(zip(references, view.tables, strict=True)):
        if id(table) not in kept:
            continue
        interval = intervals[name]
        if position == index:
            _swap(table, _change_rows_sql(interval, images))
        elif position < index and append_only:
            grown = f"{_version_sql(name, interval.offset)} union all "
            _swap(table, grown + _change_rows_sql(interval, "('insert')"))
        else:
            version = interval.pin.version if position < index else interval.offset
            _swap(table, _version_sql(name, version))
    return query.sql(dialect=DIALECT, identify=True)


def _keep_branches_of(query: exp.Expr, table: exp.Table) -> exp.Expr:
    """The query with every UNION ALL above `table` reduced to the side that holds it."""
    node: exp.Expr = table
    while node is not query:
        parent = node.parent
        assert parent is not None, "the reference is inside the query"
        if not isinstance(parent, exp.Union):
            node = parent
        elif parent is query:
            return node.pop()
        else:
            parent.replace(node)
    return query


def _version_sql(name: str, version: int) -> str:
    return f"select * from {name} version as of {version}"


def _change_rows_sql(interval: TableInterval, images: str) -> str:
    """The table's change rows of one sign, with the table's own columns only."""
    change = ChangeRange(
        interval.table.name, interval.table.columns, (), interval.offset + 1,
        interval.pin.version, interval.table.column_types, interval.table.location,
    )  # fmt: skip
    columns = ", ".join(quote(column) for column in interval.table.columns)
    return f"select {columns} from {feed_sql(change)} where _change_type in {images}"


def _swap(table: exp.Table, relation_sql: str) -> None:
    """Replace a table reference with a subquery under the same alias."""
    alias = table.alias or table.name
    relation = sqlglot.parse_one(relation_sql, read=DIALECT)
    table.replace(exp.Subquery(this=relation, alias=exp.TableAlias(this=exp.to_identifier(alias))))
