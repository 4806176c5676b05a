"""Where a view column's values in a build's changes come from, so a clustered mirror's MERGE
gets its ranges without reading the change set once more.

A mirror clustered by a column names that column's ranges in its MERGE (builds/config.py,
ranges_cluster_column). For a table stream they come from the change set; for a view stream
that means computing the view's changes twice, joins included (2.6 s of a 12 s build at 1M
rows). But the view's column is often a plain column of one table reference, say
`o.customer_id`, and each term's rows take it either from that reference's own change set
(the term of orders) or, through an equi-join `o.customer_id = c.id`, from the changed
table's joined column (the term of customers). Both change sets' ranges are read for pruning
anyway (pruning.py), so the column's ranges are their union: every value of the column in
any term's rows, old images included, lies in one of them. A column computed by an
expression, of a nested view or a UNION ALL, or joined otherwise, has no such source, and
the change set is read as for a table stream.
"""

from collections.abc import Callable

from sqlglot import exp

from dbt.adapters.spark_streams.streams.records.key_ranges import can_range
from dbt.adapters.spark_streams.streams.sql.run import Row
from dbt.adapters.spark_streams.streams.views.definition import ViewDefinition
from dbt.adapters.spark_streams.streams.views.pruning import EquiJoin, table_aliases


def column_source(view: ViewDefinition, column: str) -> tuple[int, str] | None:
    """The table reference (position) and its column that the view's `column` passes on
    unchanged; None when it is anything else."""
    query = view.query
    names = [name.lower() for name in view.columns]
    if not isinstance(query, exp.Select) or column.lower() not in names:
        return None
    projection = query.expressions[names.index(column.lower())]
    references = list(query.find_all(exp.Table, bfs=False))
    position = {id(table): index for index, table in enumerate(references)}
    select: exp.Select = query
    while True:
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(inner, exp.Column):
            return None
        if inner.table:
            found = table_aliases(select, position).get(inner.table.lower())
            return None if found is None else (found, inner.name)
        # an unqualified column of a select that reads one table and joins nothing: its own
        table = _only_table(select)
        if table is not None:
            return position[id(table)], inner.name
        # an unqualified column of a select over one subquery (the expanded view renames the
        # query's columns to the view's so): the subquery's column of that name
        nested = _only_subquery(select)
        if nested is None:
            return None
        named = [p for p in nested.expressions if p.alias_or_name.lower() == inner.name.lower()]
        if len(named) != 1:
            return None
        select, projection = nested, named[0]


def _only_source(select: exp.Select) -> exp.Expression | None:
    """What a select reads when it reads one thing and joins nothing."""
    source = select.args.get("from_")
    return None if source is None or select.args.get("joins") else source.this


def _only_table(select: exp.Select) -> exp.Table | None:
    """The table a select reads when it reads one table and joins nothing."""
    source = _only_source(select)
    return source if isinstance(source, exp.Table) else None


def _only_subquery(select: exp.Select) -> exp.Select | None:
    """The select a select reads when it reads one subquery and joins nothing."""
    source = _only_source(select)
    inner = source.this if isinstance(source, exp.Subquery) else None
    return inner if isinstance(inner, exp.Select) else None


def column_ranges(
    view: ViewDefinition,
    joins: list[EquiJoin],
    column: str,
    changed: list[int],
    ranges: Callable[[int, str], list[Row]],
    column_type: Callable[[int, str], str | None],
) -> list[Row] | None:
    """The ranges of the view `column`'s values in the terms of the `changed` references, as
    key ranges rows; None when a term's values cannot be told from its change set."""
    source = column_source(view, column)
    if source is None:
        return None
    owner, owned = source
    if not can_range(column_type(owner, owned)):
        return None
    rows: list[Row] = []
    for index in changed:
        if index == owner:
            joined: str | None = owned
        else:
            joined = next(
                (
                    join.column
                    for join in joins
                    if (join.changed, join.other) == (index, owner)
                    and join.other_column.lower() == owned.lower()
                ),
                None,
            )
        if joined is None or not can_range(column_type(index, joined)):
            return None
        rows += ranges(index, joined)
    return rows
