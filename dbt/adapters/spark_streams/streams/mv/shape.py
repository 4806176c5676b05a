"""What a materialized view's query is, as its refresh sees it: an aggregate over an input.

A query refreshes incrementally when it is one SELECT whose FROM and WHERE form an input a
view stream can follow (views/rules.py: projections, filters, inner and cross joins, UNION ALL
in subqueries) and whose output is grouped by it:

    select <group keys and aggregates> from <input> [where ...] [group by ...] [having ...]
    select distinct <columns> from <input> [where ...]
    select <aggregates> from <input> [where ...]                 (one group: a global aggregate)

Each output column is a group key (as written in GROUP BY, by its alias or its ordinal) or an
aggregate: COUNT(*), COUNT(x), SUM(x), AVG(x), MIN(x), MAX(x) are maintained from the change
alone (`Aggregate.kind`); anything else that is deterministic (COUNT(DISTINCT x), an expression
over aggregates, another aggregate function) and HAVING make the groups the change touches be
recomputed from the sources (`Shape.recompute_groups`). Every other query (a window, LIMIT, an
outer join, a non-deterministic function, ...) refreshes fully, and `Full` says why and where.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from dbt.adapters.spark_streams.streams.views.definition import inline_ctes
from dbt.adapters.spark_streams.streams.views.rules import first_violation, function_name

DIALECT = "spark"
# Aggregates kept from the change alone; the value is the state the target keeps for them.
MAINTAINED: dict[type[exp.Expr], str] = {
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
}
# Clauses of the top SELECT that make the result more than its groups: a full refresh.
TOP_CLAUSES: tuple[tuple[str, str], ...] = (
    ("limit", "LIMIT"),
    ("offset", "OFFSET"),
    ("order", "ORDER BY"),
    ("sort", "SORT BY"),
    ("cluster", "CLUSTER BY"),
    ("distribute", "DISTRIBUTE BY"),
    ("qualify", "QUALIFY"),
    ("laterals", "LATERAL VIEW"),
)


@dataclass(frozen=True)
class Aggregate:
    """An output column computed per group: `kind` one of count_star, count, sum, avg, min,
    max (maintained from the change), or other (recomputed); `arg` its argument's SQL."""

    kind: str
    arg: str | None


@dataclass(frozen=True)
class Output:
    """One column of the query's result, in order: a group key (`key` its index) or an
    aggregate, with the SQL that computes it in the query."""

    sql: str
    key: int | None = None
    aggregate: Aggregate | None = None


@dataclass(frozen=True)
class Shape:
    """A query that refreshes incrementally, split at its input: the source columns it reads
    (input column n is `_mv_c<n>`), the input's SQL (those columns, FROM and WHERE), and the
    query over the input (`query`, reading `_mv_input`), whose group keys and outputs follow."""

    columns: tuple[str, ...]
    input_sql: str
    query: str
    keys: tuple[str, ...]  # the GROUP BY expressions (a SELECT DISTINCT's outputs), over the input
    outputs: tuple[Output, ...]
    having: str | None = None
    # a query with an outer join: its tables (alias, schema, name), each followed by a table
    # stream of its own (joined_sql.py); `query`, `keys` and `outputs` are then as written
    tables: tuple[tuple[str, str, str], ...] = ()

    @property
    def args(self) -> tuple[str, ...]:
        """The distinct arguments of the maintained aggregates, in order of appearance."""
        found: list[str] = []
        for output in self.outputs:
            aggregate = output.aggregate
            if aggregate and aggregate.arg is not None and aggregate.arg not in found:
                found.append(aggregate.arg)
        return tuple(found)

    @property
    def recompute_groups(self) -> bool:
        """Whether every group the change touches is recomputed from the sources (HAVING, or
        an aggregate not kept from the change alone)."""
        return (
            bool(self.tables)
            or self.having is not None
            or any(
                output.aggregate and output.aggregate.kind == "other" for output in self.outputs
            )
        )

    @property
    def recomputes_from_input(self) -> bool:
        """Whether a refresh may recompute groups from the input (refresh_sql.py): every
        changed group (recompute_groups), or a MIN's or MAX's whose extremum may be deleted."""
        return self.recompute_groups or any(
            output.aggregate and output.aggregate.kind in ("min", "max") for output in self.outputs
        )

    def key_output(self, index: int) -> int:
        """The position of the output column that holds group key `index`."""
        return next(i for i, output in enumerate(self.outputs) if output.key == index)


@dataclass(frozen=True)
class Full:
    """A query that refreshes fully: why, and the line of the model's SQL it starts at."""

    reason: str
    line: int | None = None

    def sentence(self) -> str:
        return f"{self.reason} at line {self.line}" if self.line else self.reason


def query_shape(sql: str, is_builtin: Callable[[str], bool] = lambda name: True) -> Shape | Full:
    """The shape of a model's query, or why it refreshes fully."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except ParseError as exc:
        return Full(f"its SQL could not be parsed ({str(exc).splitlines()[0]})")
    if len(statements) != 1 or not isinstance(statements[0], exp.Select):
        node = statements[0] if statements else None
        return Full("its query is not a single SELECT (a set operation or a CTE)", _line(node))
    select = statements[0]
    for arg, name in TOP_CLAUSES:
        if select.args.get(arg):
            return Full(name, _line(select.args[arg]))
    window = select.find(exp.Window)
    if window is not None:
        return Full("a window function", _line(window))
    with_ = select.args.get("with_")
    if with_ is not None and with_.args.get("recursive"):
        return Full("a recursive WITH clause", _line(select))
    select = cast(exp.Select, inline_ctes(select))  # CTEs (an ephemeral model's) in FROM
    outer = _outer_joins(select)
    problem = _input_problem(_inner(select) if outer else select, is_builtin)
    if problem:
        return problem
    if outer and not all(isinstance(item, exp.Table) for item in from_items(select)):
        return Full("an outer join of a subquery or a view's query (join tables)", _line(outer[0]))
    return _grouped(select, is_builtin, joined=bool(outer))


def from_items(select: exp.Select) -> list[exp.Expr]:
    """The top SELECT's FROM item and its joined items, in order."""
    return [select.args["from_"].this, *(join.this for join in select.args.get("joins") or [])]


def _outer_joins(select: exp.Select) -> list[exp.Join]:
    """The top SELECT's LEFT, RIGHT and FULL joins."""
    joins = select.args.get("joins") or []
    return [j for j in joins if (j.args.get("side") or "").upper() in ("LEFT", "RIGHT", "FULL")]


def _inner(select: exp.Select) -> exp.Select:
    """The query with its outer joins made inner (the rest is checked as a view's would be)."""
    probe = select.copy()
    for join in _outer_joins(probe):
        join.set("side", None)
        join.set("kind", None)
    return probe


def _input_problem(select: exp.Select, is_builtin: Callable[[str], bool]) -> Full | None:
    """Why the FROM and WHERE cannot be followed by a view stream, or None."""
    if not select.args.get("from_"):
        return Full("a query without FROM")
    probe = exp.select("1").from_(select.args["from_"].this.copy())
    for join in select.args.get("joins") or []:
        probe = probe.join(join.copy())
    if select.args.get("where"):
        probe = probe.where(select.args["where"].this.copy())
    violation = first_violation(probe, is_builtin)
    if violation is None:
        return None
    node = _find_violation(select, violation)
    return Full(violation, _line(node))


def _grouped(select: exp.Select, is_builtin: Callable[[str], bool], joined: bool) -> Shape | Full:
    """The outputs as group keys and aggregates."""
    aliases = {e.alias: e.this for e in select.expressions if isinstance(e, exp.Alias)}
    distinct = bool(select.args.get("distinct"))
    group = select.args.get("group")
    grouping_sets = (exp.Rollup, exp.Cube, exp.GroupingSets)
    if group and (
        any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets"))
        or any(isinstance(e, grouping_sets) for e in group.expressions)
    ):
        return Full("ROLLUP, CUBE or GROUPING SETS", _line(group))
    if distinct and group:
        return Full("SELECT DISTINCT with GROUP BY", _line(select))
    if not group and not distinct and not select.find(exp.AggFunc):
        return Full(
            "neither GROUP BY, DISTINCT nor an aggregate (a plain view: use a view stream)"
        )
    if any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
        for e in select.expressions
    ):
        return Full("a * in the select list of an aggregate (name the columns)", _line(select))
    having = select.args.get("having")
    for part in [
        *select.expressions,
        *(group.expressions if group else []),
        having and having.this,
    ]:
        problem = _scalar_problem(part, is_builtin)
        if problem:
            return problem
    keys = [
        _key_expression(e, aliases, select.expressions)
        for e in (group.expressions if group else [])
    ]
    if distinct:
        keys = [_unaliased(e) for e in select.expressions]
    for item in select.expressions:
        key_sql = [k.sql(DIALECT) for k in keys]
        checked = _output(_unaliased(item), key_sql, is_builtin)
        if isinstance(checked, Full):
            return checked
    missing = [k.sql(DIALECT) for k in keys if all(_unaliased(e) != k for e in select.expressions)]
    if missing:
        return Full(f"group key {missing[0]} is not a column of the result (add it)", _line(group))
    return _joined(select, keys) if joined else _over_input(select, keys)


def _joined(select: exp.Select, keys: list[exp.Expr]) -> Shape:
    """A query with an outer join, kept as written: its tables are followed one by one."""
    tables = tuple(
        (t.alias_or_name, t.db, t.name) for t in from_items(select) if isinstance(t, exp.Table)
    )
    key_sql = [k.sql(DIALECT) for k in keys]
    outputs = [_output(_unaliased(e), key_sql, lambda name: True) for e in select.expressions]
    having = select.args.get("having")
    return Shape(
        columns=(),
        input_sql="",
        query=select.sql(DIALECT),
        keys=tuple(key_sql),
        outputs=tuple(o for o in outputs if isinstance(o, Output)),
        having=having.this.sql(DIALECT) if having else None,
        tables=tables,
    )


def _over_input(select: exp.Select, keys: list[exp.Expr]) -> Shape:
    """The query split at its input: every source column it reads (in its select list, GROUP
    BY and HAVING) becomes an input column `_mv_c<n>`, and the query reads `_mv_input`."""
    columns: dict[str, str] = {}

    def rename(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.is_star:
            return exp.column(columns.setdefault(node.sql(DIALECT), f"_mv_c{len(columns)}"))
        return node

    query = select.copy()
    for arg in ("joins", "where", "with_"):
        query.set(arg, None)
    if query.args.get("group"):
        query.set("group", exp.Group(expressions=[k.copy() for k in keys]))
    query.set("from_", exp.From(this=exp.to_table("_mv_input")))
    over_input = query.transform(rename)
    renamed = [rename_copy.transform(rename) for rename_copy in (k.copy() for k in keys)]
    key_sql = [k.sql(DIALECT) for k in renamed]
    outputs = [_output(_unaliased(e), key_sql, lambda name: True) for e in over_input.expressions]
    items = ", ".join(f"{column} as {name}" for column, name in columns.items()) or "1 as _mv_one"
    having = over_input.args.get("having")
    return Shape(
        columns=tuple(columns),
        input_sql=f"select {items} {_input_sql(select)}",
        query=over_input.sql(DIALECT),
        keys=tuple(key_sql),
        outputs=tuple(o for o in outputs if isinstance(o, Output)),
        having=having.this.sql(DIALECT) if having else None,
    )


def _scalar_problem(part: exp.Expr | None, is_builtin: Callable[[str], bool]) -> Full | None:
    """What in a select item, group key or HAVING a refresh cannot repeat (a non-deterministic
    or user-defined function, a subquery, ...); its aggregates are the refresh's own."""
    if part is None:
        return None
    violation = first_violation(exp.select(part.copy()), is_builtin)
    if violation is None or violation.startswith("an aggregate function"):
        return None
    named = violation.rsplit("(", 1)[-1].rstrip(")")
    node = next((f for f in part.find_all(exp.Func) if function_name(f) == named), part)
    return Full(violation, _line(node))


def _key_expression(expression: exp.Expr, aliases: dict, items: list) -> exp.Expr:
    """A GROUP BY item as the expression it names (an ordinal or an output alias)."""
    if isinstance(expression, exp.Literal) and expression.is_int:
        return _unaliased(items[int(expression.name) - 1])
    if isinstance(expression, exp.Column) and not expression.table and expression.name in aliases:
        return aliases[expression.name]
    return expression


def _unaliased(expression: exp.Expr) -> exp.Expr:
    return expression.this if isinstance(expression, exp.Alias) else expression


def _output(
    expression: exp.Expr, keys: list[str], is_builtin: Callable[[str], bool]
) -> Output | Full:
    text = expression.sql(DIALECT)
    if text in keys:
        return Output(text, key=keys.index(text))
    window = expression.find(exp.Window)
    if window is not None:
        return Full("a window function", _line(window))
    aggregates = list(expression.find_all(exp.AggFunc))
    if not aggregates:
        return Full(f"output {text} is neither a group key nor an aggregate", _line(expression))
    kind = MAINTAINED.get(type(expression))
    argument = expression.this if kind else None
    if kind == "count" and isinstance(argument, exp.Star):
        return Output(text, aggregate=Aggregate("count_star", None))
    if (
        kind
        and argument is not None
        and not isinstance(argument, exp.Distinct)
        and not expression.expressions
    ):
        return Output(text, aggregate=Aggregate(kind, argument.sql(DIALECT)))
    return Output(text, aggregate=Aggregate("other", None))


def _input_sql(select: exp.Select) -> str:
    """`from ... joins ... [where ...]` of the query, as written."""
    parts = [select.args["from_"].sql(DIALECT)]
    parts += [join.sql(DIALECT) for join in select.args.get("joins") or []]
    if select.args.get("where"):
        parts.append(select.args["where"].sql(DIALECT))
    return " ".join(parts)


def _find_violation(select: exp.Select, violation: str) -> exp.Expr | None:
    """The node a violation names, for its line: a join, or the function it names."""
    named = violation.rsplit("(", 1)[-1].rstrip(")") if violation.endswith(")") else None
    for node in select.walk():
        if isinstance(node, exp.Join) and "JOIN" in violation:
            return node
        if isinstance(node, exp.Func) and named and function_name(node) == named:
            return node
    return None


def _line(node: exp.Expr | None) -> int | None:
    """The line a node starts at, from sqlglot's token positions (its own or a child's)."""
    if node is None:
        return None
    for part in node.walk():
        line = part.meta.get("line") if part.meta else None
        if line:
            return int(line)
    return None
