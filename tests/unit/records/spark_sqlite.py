"""Runs the Spark SQL of change reads on SQLite (Python's own), so unit tests see their rows.

sqlglot's Python executor has no window functions nor lateral views, which netting needs;
SQLite has both. sqlglot transpiles the rest, after a few rewrites for what SQLite lacks:
structs are JSON objects (`s.field` reads them with json_extract; `s.*`, `* except (...)` and
`struct(*)` stand for the given columns), `sha1` and `raise_error` are Python functions,
`first(x, true)` an aggregate, a lateral view a join, and `table_changes(...)` / `version as
of` read the tables given.
Orderable values only: a struct of a version and a timestamp orders as JSON text, so tests
keep versions below 10.
"""

import functools
import hashlib
import json
import sqlite3

import sqlglot
from sqlglot import exp

STRUCTS = frozenset({"_first", "_final", "_last", "_row", "_old", "_new"})
FEED_FUNCTIONS = frozenset({"table_changes", "table_changes_by_path"})
FEED_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")
Rows = list[dict]


class FirstNotNull:
    """`first(x, true)`: the first value that is not null."""

    def __init__(self) -> None:
        self.value = None

    def step(self, value: object) -> None:
        if self.value is None:
            self.value = value

    def finalize(self) -> object:
        return self.value


def sha1(text: object) -> str | None:
    return None if text is None else hashlib.sha1(str(text).encode()).hexdigest()


def _struct_field(column: exp.Column) -> exp.Expression:
    parts = [part.name for part in column.parts]
    path = exp.Literal.string("$." + ".".join(parts[1:]))
    return exp.Anonymous(this="json_extract", expressions=[exp.column(parts[0]), path])


def _lateral_join(lateral: exp.Lateral) -> exp.Join:
    """`lateral view explode(...) t as c` as a join of the exploded values."""
    table, column = lateral.alias, lateral.args["alias"].columns[0].name
    exploded = lateral.this.this
    if isinstance(exploded, exp.Array):
        values = " union all ".join(f"select {e.sql('sqlite')} as {column}" for e in exploded)
        return exp.Join(this=sqlglot.parse_one(values).subquery(table))
    start, end = exploded.args["start"].sql("sqlite"), exploded.args["end"].sql("sqlite")
    numbers = sqlglot.parse_one(f"select n as {column} from _numbers").subquery(table)
    on = f"{table}.{column} between {start} and {end}"
    return exp.Join(this=numbers, on=sqlglot.parse_one(on))


def _table(table: exp.Table) -> exp.Expression:
    """A change feed's range, or a snapshot's version, as a query of the given tables."""
    if isinstance(table.this, exp.Anonymous) and table.this.name.lower() in FEED_FUNCTIONS:
        _, start, end = (arg.sql("sqlite") for arg in table.this.expressions)
        between = f"_commit_version between {start} and {end}"
        return sqlglot.parse_one(f"select * from changes where {between}").subquery()
    version = table.args.get("version")
    if version is not None:
        return exp.to_table(f"snapshot_{version.expression.name}")
    return table


def _rewrite(node: exp.Expression, columns: tuple[str, ...]) -> exp.Expression:
    if isinstance(node, exp.Struct):
        if isinstance(node.expressions[0], exp.Star):  # struct(*) of the given columns
            kept = _unstarred(node.expressions[0], columns)
            pairs = [(exp.Literal.string(c), exp.column(c, quoted=True)) for c in kept]
        else:
            pairs = [(exp.Literal.string(e.this.name), e.expression) for e in node.expressions]
        return exp.Anonymous(this="json_object", expressions=[x for p in pairs for x in p])
    struct = isinstance(node, exp.Column) and node.parts[0].name in STRUCTS
    if struct and len(node.parts) > 1 and not isinstance(node.this, exp.Star):
        return _struct_field(node)
    if isinstance(node, exp.JSONFormat):
        return node.this
    if isinstance(node, exp.SHA):
        return exp.Anonymous(this="sha1", expressions=[node.this])
    if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.First):
        return exp.Anonymous(this="first_not_null", expressions=[node.this.this])
    if isinstance(node, exp.Cast) and node.to.is_type("timestamp", "timestamptz"):
        return node.this
    if isinstance(node, exp.Table):
        return _table(node)
    if isinstance(node, exp.Select):
        node.set("expressions", [x for e in node.expressions for x in _spread(e, columns)])
    if isinstance(node, exp.Select) and node.args.get("laterals"):
        joins = [_lateral_join(lateral) for lateral in node.args["laterals"]]
        node.set("laterals", None)
        node.set("joins", [*(node.args.get("joins") or []), *joins])
    return node


def _unstarred(star: exp.Star, columns: tuple[str, ...]) -> list[str]:
    """The given columns a `*` or `* except (...)` stands for."""
    dropped = {column.name for column in star.args.get("except_") or []}
    return [column for column in columns if column not in dropped]


def _spread(item: exp.Expression, columns: tuple[str, ...]) -> list[exp.Expression]:
    """A select item; `s.*` of a struct as its fields, `* except (...)` as the given columns
    it keeps, one item a column."""
    if isinstance(item, exp.Star) and item.args.get("except_"):
        return [exp.column(column, quoted=True) for column in _unstarred(item, columns)]
    if not (isinstance(item, exp.Column) and isinstance(item.this, exp.Star) and item.table):
        return [item]
    path = [exp.Literal.string(f"$.{column}") for column in columns]
    fields = [
        exp.Anonymous(this="json_extract", expressions=[exp.column(item.table), p]) for p in path
    ]
    return [exp.alias_(field, column) for field, column in zip(fields, columns, strict=True)]


@functools.cache
def sqlite_sql(spark_sql: str, columns: tuple[str, ...]) -> str:
    """The SQLite spelling of `spark_sql`, whose struct stars spread `columns`."""
    tree = sqlglot.parse_one(spark_sql, read="spark")
    tree = tree.this if isinstance(tree, exp.Subquery) else tree  # a relation: (select ...)
    for node in reversed(list(tree.walk(bfs=False))):  # children first, then their parent
        rewritten = _rewrite(node, tuple(columns))
        if rewritten is not node:
            node.replace(rewritten)
    return tree.sql(dialect="sqlite")


def run(spark_sql: str, columns: tuple[str, ...], changes: Rows = (), **tables: Rows) -> Rows:
    """The rows of `spark_sql` over `changes` (the source's change feed: its columns and
    _change_type, _commit_version, _commit_timestamp) and other named tables."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    raised: list[str] = []

    def raise_error(message: str) -> None:
        raised.append(message)
        raise ValueError(message)

    db.create_function("sha1", 1, sha1)
    db.create_function("raise_error", 1, raise_error)
    db.create_aggregate("first_not_null", 1, FirstNotNull)
    db.execute("create table _numbers (n)")
    db.executemany("insert into _numbers values (?)", [(n,) for n in range(1, 20)])
    for name, rows in {"changes": list(changes), **tables}.items():
        names = (*columns, *FEED_COLUMNS) if name == "changes" else columns
        db.execute(f"create table {name} ({', '.join(names)})")
        holes = ", ".join("?" for _ in names)
        db.executemany(
            f"insert into {name} values ({holes})", [[row.get(n) for n in names] for row in rows]
        )
    try:
        return [dict(row) for row in db.execute(sqlite_sql(spark_sql, columns))]
    except sqlite3.OperationalError as failed:
        raise RuntimeError(raised[0] if raised else str(failed)) from failed


def key_id(**key: object) -> str:
    """A keyed row's id: the sha1 of its key's JSON, as Spark's to_json writes it."""
    return sha1(json.dumps(key, separators=(",", ":")))
