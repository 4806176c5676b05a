"""What a stream's view may contain: projections with deterministic built-in scalar expressions,
WHERE filters, inner and cross joins and UNION ALL, over tables (docs/concepts/contract.md,
streams on views).

A view stream computes the view's changes from its tables' change sets, join term by join
term. That algebra holds for exactly these operators: each output row comes from one row of
each table it joins, so a table row's insert or delete adds or removes exactly the output rows
it takes part in. An aggregate, DISTINCT, an outer join, a window or a LIMIT makes an output
row depend on other rows of the same table, and a non-deterministic function gives another
row at every read, so the change set could not be derived; those are refused by name.

The checks read one view's own definition (sqlglot's Spark dialect); nested views are checked
one by one as the definition is expanded (view_definition.py).
"""

from collections.abc import Callable, Iterator

from sqlglot import exp

ALLOWED = "projections, filters, inner and cross joins and UNION ALL"

# Spark's non-deterministic built-ins (their expressions are not `deterministic`): each read
# of the view would give other values.
NON_DETERMINISTIC = frozenset(
    {
        "rand", "random", "randn", "randstr", "uniform", "uuid", "shuffle",
        "monotonically_increasing_id", "spark_partition_id", "input_file_name",
        "input_file_block_start", "input_file_block_length", "current_timestamp", "now",
        "current_date", "curdate", "localtimestamp", "current_timezone", "unix_timestamp",
        "reflect", "java_method", "try_reflect",
    }
)  # fmt: skip

# Functions that produce several rows from one (Spark's generators).
GENERATORS = frozenset(
    {"explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer",
     "stack", "json_tuple", "variant_explode", "variant_explode_outer"}
)  # fmt: skip

# Clause nodes refused wherever they appear, with the name the error gives them.
CLAUSES: tuple[tuple[type[exp.Expr], str], ...] = (
    (exp.Group, "GROUP BY"),
    (exp.Window, "a window function"),
    (exp.Qualify, "QUALIFY"),
    (exp.Limit, "LIMIT"),
    (exp.Offset, "OFFSET"),
    (exp.Fetch, "FETCH"),
    (exp.Order, "ORDER BY"),
    (exp.Sort, "SORT BY"),
    (exp.Cluster, "CLUSTER BY"),
    (exp.Distribute, "DISTRIBUTE BY"),
    (exp.Having, "HAVING"),
    (exp.Intersect, "INTERSECT"),
    (exp.Except, "EXCEPT"),
    (exp.Lateral, "LATERAL VIEW"),
    (exp.TableSample, "TABLESAMPLE"),
    (exp.Values, "an inline table (VALUES)"),
    (exp.Exists, "a subquery outside FROM (EXISTS)"),
    (exp.Pivot, "PIVOT"),
)


def first_violation(definition: exp.Expr, is_builtin: Callable[[str], bool]) -> str | None:
    """The first construct of `definition` a view stream cannot follow, named as the error
    names it; None when every construct is supported. `is_builtin` tells Spark's built-in
    functions from user-defined ones."""
    for node in definition.walk():
        problem = _clause(node) or _join(node) or _subquery(node) or _function(node, is_builtin)
        if problem:
            return problem
    return None


def _clause(node: exp.Expr) -> str | None:
    for kind, name in CLAUSES:
        if isinstance(node, kind):
            return name
    if isinstance(node, exp.Union) and node.args.get("distinct"):
        return "UNION without ALL"
    if isinstance(node, exp.Select) and node.args.get("distinct"):
        return "DISTINCT"
    return None


def _join(node: exp.Expr) -> str | None:
    if not isinstance(node, exp.Join):
        return None
    side = (node.args.get("side") or "").upper()
    kind = (node.args.get("kind") or "").upper()
    if side or kind not in ("", "INNER", "CROSS"):
        return f"a {' '.join(part for part in (side, kind) if part)} JOIN"
    return None


def _subquery(node: exp.Expr) -> str | None:
    """Subqueries may only be FROM or JOIN items; IN (subquery) and scalar ones are refused."""
    if isinstance(node, exp.In) and node.args.get("query") is not None:
        return "a subquery outside FROM (IN)"
    in_from = (exp.From, exp.Join, exp.Union, exp.Subquery)
    if isinstance(node, exp.Subquery) and not isinstance(node.parent, in_from):
        return "a subquery outside FROM (scalar subquery)"
    return None


def _function(node: exp.Expr, is_builtin: Callable[[str], bool]) -> str | None:
    if not isinstance(node, exp.Func) or isinstance(node, exp.Window):
        return None
    name = function_name(node)
    if isinstance(node.parent, exp.Table):
        return f"a table-valued function ({name})"
    if isinstance(node, exp.AggFunc):
        return f"an aggregate function ({name})"
    if name in GENERATORS or isinstance(node, (exp.Explode, exp.Inline, exp.Unnest)):
        return f"a generator function ({name})"
    if name in NON_DETERMINISTIC or isinstance(node, (exp.Rand, exp.Randn, exp.Uuid)):
        return f"a non-deterministic function ({name})"
    if _is_user_defined(node, name, is_builtin):
        return f"a user-defined function ({name})"
    return None


def function_name(node: exp.Func) -> str:
    """The function's name as written in Spark SQL, lower case."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return str(node.sql_name()).lower()


def _is_user_defined(node: exp.Func, name: str, is_builtin: Callable[[str], bool]) -> bool:
    """sqlglot knows many built-ins by class; a name it does not know (or a qualified name,
    `db.f(x)`) is asked of Spark's own function registry."""
    if isinstance(node.parent, exp.Dot):
        return True
    return isinstance(node, exp.Anonymous) and not is_builtin(name)


def table_references(definition: exp.Expr) -> Iterator[exp.Table]:
    """The definition's table references in reading order (a self-join gives two)."""
    for node in definition.walk():
        if isinstance(node, exp.Table) and node.name:
            yield node
