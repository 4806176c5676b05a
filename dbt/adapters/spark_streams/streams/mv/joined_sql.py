"""The refresh of a materialized view whose query has an outer join.

A view stream cannot follow an outer join (a row's partner appearing or disappearing adds or
removes NULL-extended rows elsewhere), so each table the query reads is followed by a table
stream of its own, and the groups the change touches are recomputed by the query itself, at
the build's pins. Which groups: a superset is enough (recomputing an untouched group rewrites
it unchanged), so each table's changed rows, both images, are joined with the other tables in
every state the change could have passed through (their rows at the pins plus their own
changed rows), all joins inner and the WHERE left out, and the group keys are read from:

- those rows (a row of the result whose partner changed);
- those rows with the changed table's columns NULL (the partner a row had or gets may be
  missing: the NULL-extended row);
- the changed rows alone, every other table's columns NULL (a row with no partner at all).

`changed_groups_sql` returns one row per such group, as the target's columns, and `_mv_keep`
(false: the group is gone, or fails HAVING); refresh_sql.merge_sql writes them.

The recompute reads the query over its tables restricted to those groups. Where every group
key is of the first FROM table and every join is inner or LEFT (so that table's rows are never
NULL-extended), a group's rows come from exactly that table's rows with its keys: that table is
read semi-joined with the groups before the joins (`_restricted_alias`), so the joins start
from the touched groups' rows instead of the whole table (a mart of customers LEFT JOIN orders
joins the few customers the change touched, not all of them), and the query's rows are then
the touched groups' without a join with them (Spark computes the groups again at each name).
"""

from collections.abc import Mapping, Sequence

import sqlglot
from sqlglot import exp

from dbt.adapters.spark_streams.streams.mv.refresh_sql import key, named_query, recomputed_rows
from dbt.adapters.spark_streams.streams.mv.shape import DIALECT, Shape, from_items
from dbt.adapters.spark_streams.streams.sql.quoting import quote

Relations = Mapping[str, str]  # per table alias: a relation's SQL (its rows, or its changes)
Columns = Mapping[str, Sequence[str]]  # per table alias: its columns


def first_build_sql(shape: Shape, pinned: Relations, names: list[str]) -> str:
    """The query over its tables at the build's pins, its columns named `names`, with the
    kept state's columns."""
    return _with_tables(named_query(shape, names).sql(DIALECT), pinned)


def changed_groups_sql(
    shape: Shape, names: list[str], pinned: Relations, changes: Relations, columns: Columns
) -> str:
    """One row per group the changes may touch, recomputed, as the target's columns `names`
    and `_mv_keep`. `changes`: each table's change rows (for a table that did not change,
    none); `columns`: each table's columns."""
    groups = _touched_groups(shape, pinned, changes, columns)
    outputs = names[: len(shape.outputs)]
    match = " and ".join(f"g.{key(i)} <=> ({k})" for i, k in enumerate(shape.keys)) or "true"
    select = named_query(shape, outputs)
    read = dict(pinned)
    alias = _restricted_alias(shape, columns)
    if alias is not None:  # (its rows are the touched groups': no join with them after)
        read[alias] = (
            f"select {alias}.* from ({pinned[alias]}) as {alias} left semi join _mv_g g on {match}"
        )
    else:
        select = select.join("_mv_g g", on=match, copy=False, dialect=DIALECT)
    recomputed = _with_tables(select.sql(DIALECT), read)
    return (
        f"with _mv_g as ({groups}), _mv_r as ({recomputed}) "
        f"{recomputed_rows(shape, outputs, '_mv_g', '_mv_r')}"
    )


def _restricted_alias(shape: Shape, columns: Columns) -> str | None:
    """The first FROM table's alias where the recompute may read only its rows of the touched
    groups: every group key reads its columns alone, and every join is inner or LEFT."""
    select = sqlglot.parse_one(shape.query, read=DIALECT)
    assert isinstance(select, exp.Select)
    first = select.args["from_"].this
    if not shape.keys or not isinstance(first, exp.Table):
        return None
    alias = first.alias_or_name
    for join in select.args.get("joins") or []:
        if (join.args.get("side") or "").upper() in ("RIGHT", "FULL"):
            return None
    others = {c.lower() for a, cols in columns.items() if a != alias for c in cols}
    for text in shape.keys:
        found = list(sqlglot.parse_one(text, read=DIALECT).find_all(exp.Column))
        for column in found:
            owner = column.table or ("" if column.name.lower() in others else alias)
            if owner != alias or column.is_star:
                return None
        if not found:
            return None  # a constant key: every row has it
    return alias


def _with_tables(query: str, relations: Relations) -> str:
    """`query` with each table reference (its alias kept) reading `relations[alias]`."""
    select = sqlglot.parse_one(query, read=DIALECT)
    assert isinstance(select, exp.Select)
    aliases = {table.alias_or_name for table in _from_tables(select)}
    placeholders: dict[str, str] = {}
    for table in list(select.find_all(exp.Table)):
        alias = table.alias_or_name
        if alias in aliases and alias in relations:
            placeholder = f"__mv_relation_{len(placeholders)}__"
            placeholders[placeholder] = relations[alias]
            table.replace(exp.to_table(placeholder).as_(alias))
    text = select.sql(DIALECT)
    for placeholder, relation in placeholders.items():
        text = text.replace(placeholder, f"({relation})")
    return text


def _touched_groups(shape: Shape, pinned: Relations, changes: Relations, columns: Columns) -> str:
    """The distinct group keys (`_mv_k<i>`) of every group a table's changes may touch."""
    aliases = [alias for alias, _, _ in shape.tables]
    both = {alias: _union(pinned[alias], changes.get(alias), columns[alias]) for alias in aliases}
    terms = []
    for alias in aliases:
        if alias not in changes:
            continue
        changed = _projected(changes[alias], columns[alias])
        relations = {**both, alias: changed}
        others = [a for a in aliases if a != alias]
        terms += [
            _term(shape, relations, columns, nulled=[]),
            _term(shape, relations, columns, nulled=[alias]),
            _term(shape, {alias: changed}, columns, nulled=others, alone=alias),
        ]
    items = ", ".join(key(i) for i in range(len(shape.keys))) or "1 as _mv_one"
    union = " union all ".join(terms)
    return f"select distinct {items} from ({union}) as _mv_touched"


def _term(
    shape: Shape, relations: Relations, columns: Columns, nulled: list[str], alone: str = ""
) -> str:
    """The group keys of the query's FROM (every join inner, no WHERE), or of the table
    `alone`, with the columns of the tables `nulled` NULL."""
    select = sqlglot.parse_one(shape.query, read=DIALECT)
    assert isinstance(select, exp.Select)
    keys = []
    for i, text in enumerate(shape.keys):
        expression = sqlglot.parse_one(text, read=DIALECT)
        expression = expression.transform(lambda node: _null_if_of(node, nulled, columns))
        keys.append(f"{expression.sql(DIALECT)} as {key(i)}")
    items = keys or ["1 as _mv_one"]
    if alone:
        only = next(t for t in _from_tables(select) if t.alias_or_name == alone)
        term = exp.select(*items, dialect=DIALECT).from_(only.copy())
        return _with_tables(term.sql(DIALECT), relations)
    for join in select.args.get("joins") or []:
        join.set("side", None)
        join.set("kind", None)
    for arg in ("where", "group", "having", "distinct"):
        select.set(arg, None)
    select = select.select(*items, append=False, copy=False, dialect=DIALECT)
    return _with_tables(select.sql(DIALECT), relations)


def _from_tables(select: exp.Select) -> list[exp.Table]:
    return [t for t in from_items(select) if isinstance(t, exp.Table)]


def _null_if_of(node: exp.Expr, nulled: list[str], columns: Columns) -> exp.Expr:
    """NULL in place of a column of one of the tables `nulled` (named by alias, or unqualified
    and one of that table's columns)."""
    if not isinstance(node, exp.Column) or node.is_star:
        return node
    owner = node.table or next((a for a, cols in columns.items() if node.name in cols), "")
    return exp.Null() if owner in nulled else node


def _projected(relation: str, columns: Sequence[str]) -> str:
    return f"select {', '.join(quote(c) for c in columns)} from ({relation}) as _mv_p"


def _union(pinned: str, changed: str | None, columns: Sequence[str]) -> str:
    """A table's rows at the pins and its changed rows (both images): every state the change
    passed through, as a superset."""
    rows = _projected(pinned, columns)
    return rows if changed is None else f"{rows} union all {_projected(changed, columns)}"
