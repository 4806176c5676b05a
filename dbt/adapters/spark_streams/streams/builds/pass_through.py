"""Whether a model passes a stream's column through unchanged, so that what is known of the
stream's values of it (views/lineage.py) holds for the model's rows.

The model's compiled SQL is read with sqlglot: its outer select must read one subquery (the
stream), join nothing, group nothing, and output the column as `*` or by its own name. A
filter is fine: it keeps a subset of the rows. Anything else, and the build reads the
column's values from the change set instead.
"""

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

REFUSED = (exp.Join, exp.Group, exp.Window, exp.AggFunc, exp.Union, exp.Lateral, exp.Unnest)


def passes_through(sql: str, column: str) -> bool:
    """Whether the model `sql` outputs the stream's `column` as the stream gives it."""
    try:
        query = sqlglot.parse_one(sql.strip().rstrip(";"), read="spark")
    except SqlglotError:
        return False
    if not isinstance(query, exp.Select) or query.args.get("distinct"):
        return False
    source = query.args.get("from_")
    if source is None or not isinstance(source.this, exp.Subquery):
        return False
    outer = [node for node in query.walk() if _outside(node, source.this)]
    if any(isinstance(node, REFUSED) for node in outer):
        return False
    return any(_outputs(projection, column) for projection in query.expressions)


def _outside(node: exp.Expr, stream: exp.Expr) -> bool:
    """Whether `node` belongs to the model's own select, not to the stream's subquery."""
    current: exp.Expr | None = node
    while current is not None:
        if current is stream:
            return False
        current = current.parent
    return True


def _outputs(projection: exp.Expr, column: str) -> bool:
    if isinstance(projection, exp.Star):
        return not projection.args.get("except_") and not projection.args.get("replace")
    inner = projection.this if isinstance(projection, exp.Alias) else projection
    same_name = projection.alias_or_name.lower() == column.lower()
    return same_name and isinstance(inner, exp.Column) and inner.name.lower() == column.lower()
