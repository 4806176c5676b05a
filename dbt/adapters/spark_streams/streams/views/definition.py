"""A stream's view as the catalog stores it, expanded down to its Delta tables and validated
before anything is read or written (docs/concepts/contract.md, streams on views).

Spark keeps a view's SQL text and the namespace its unqualified names resolve in. The text is
parsed with sqlglot (Spark dialect), its CTEs inlined, and each table reference resolved: a
nested view is checked the same way and inlined as a subquery, a Delta table is qualified. The
expanded query names base tables only, so it reads the same wherever it runs, and its
fingerprint changes when any view of the chain is redefined.
"""

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from dbt.adapters.spark_streams.streams.errors import SparkUnreachable, StreamError
from dbt.adapters.spark_streams.streams.sql.catalog import (
    column_names,
    detailed_info,
    reader_label,
    spell_columns,
)
from dbt.adapters.spark_streams.streams.sql.quoting import quote_path, string_literal
from dbt.adapters.spark_streams.streams.sql.run import Row, RunSql
from dbt.adapters.spark_streams.streams.views.rules import ALLOWED, first_violation

DIALECT = "spark"
SESSION_CATALOG = "spark_catalog"


@dataclass(frozen=True)
class ViewDefinition:
    """A view expanded to its base tables: `tables` holds one quoted name per reference, in
    reading order (a table joined to itself appears twice); `columns` are the view's own, as
    the catalog names them."""

    name: str
    query: exp.Expr
    tables: tuple[str, ...]
    columns: tuple[str, ...] = ()

    @property
    def sql(self) -> str:
        return self.query.sql(dialect=DIALECT, identify=True)

    @property
    def fingerprint(self) -> str:
        """Changes whenever the view, or any view it reads, is defined differently."""
        return hashlib.sha256(self.sql.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class _Reading:
    """Who reads the view being expanded: the reader's label for errors, the stream's view,
    and the views between them (outermost first)."""

    reader: str
    top: str
    chain: tuple[str, ...]
    is_builtin: Callable[[str], bool]

    def refuse(self, problem: str) -> StreamError:
        where = ""
        if self.chain:
            inner, *through = reversed(self.chain)
            where = f" (in view {inner}" + (
                f", read through {', '.join(through)}" if through else ""
            )
            where += ")"
        return StreamError(f"{reader_label(self.reader)}: view {self.top} {problem}{where}.")

    def inner(self, view: str) -> "_Reading":
        return _Reading(self.reader, self.top, (*self.chain, view), self.is_builtin)


def read_view_definition(run: RunSql, schema: str, identifier: str, reader: str) -> ViewDefinition:
    """The view `schema.identifier` expanded and validated; a StreamError naming the view, the
    construct and where it sits otherwise."""
    top = f"{schema}.{identifier}"
    reading = _Reading(reader, top, (), builtin_lookup(run))
    described = run(f"describe table extended {quote_path(schema, identifier)}")
    query = _expand(run, described, schema, reading)
    tables = tuple(
        quote_path(table.db, table.name) for table in query.find_all(exp.Table, bfs=False)
    )
    return ViewDefinition(top, query, tables, column_names(described))


def _expand(run: RunSql, described: list[Row], schema: str, reading: _Reading) -> exp.Expr:
    """A view of `schema`, from its DESCRIBE TABLE EXTENDED rows: parsed, checked, expanded."""
    text, namespace = _stored_view(described, schema, reading)
    try:
        query = sqlglot.parse_one(text, read=DIALECT)
    except ParseError as exc:
        raise reading.refuse(
            f"has a definition the adapter cannot parse ({str(exc).splitlines()[0]}); "
            "recreate the view in plain Spark SQL"
        ) from exc
    query = inline_ctes(query)
    problem = first_violation(query, reading.is_builtin)
    if problem:
        raise reading.refuse(
            f"uses {problem}; a stream's view may only use {ALLOWED}"
        )  # names the chain
    for table in list(query.find_all(exp.Table, bfs=False)):
        _resolve(run, table, namespace, reading)
    return _as_stored(query, described)


def _as_stored(query: exp.Expr, described: list[Row]) -> exp.Expr:
    """The query projected onto the view's columns the way Spark reads a view: the query's
    output columns recorded when the view was created, by name, renamed to the view's own. So
    a view over `select *` keeps its columns when a base table gains one, as it does in Spark.
    """
    names = _recorded_columns(detailed_info(described, "View Query Output Columns") or "")
    columns = column_names(described)
    if len(names) != len(columns):  # not recorded, or a name with ", " in it: read as is
        return query
    projection = [
        exp.alias_(exp.column(name, quoted=True), column, quoted=True)
        for name, column in zip(names, columns, strict=True)
    ]
    stored = exp.TableAlias(this=exp.to_identifier("_stored", quoted=True))
    return exp.select(*projection).from_(exp.Subquery(this=query, alias=stored))


def _recorded_columns(recorded: str) -> list[str]:
    """The names of DESCRIBE's `[`a`, `b`]` (Spark 4 quotes each) or `[a, b]`."""
    if not recorded:
        return []
    if recorded.startswith("[`"):
        return [name.replace("``", "`") for name in re.findall(r"`((?:[^`]|``)*)`", recorded)]
    return recorded.strip("[]").split(", ")


def _stored_view(described: list[Row], schema: str, reading: _Reading) -> tuple[str, str]:
    """The view's SQL text and the schema its unqualified names resolve in (the catalog's,
    else the view's own `schema`)."""
    text = detailed_info(described, "View Text")
    if text is None:
        raise reading.refuse(
            "is a temporary view or has no stored definition; create it with CREATE VIEW"
        )
    namespace = detailed_info(described, "View Catalog and Namespace") or schema
    return text, namespace.split(".")[-1]


def _resolve(run: RunSql, table: exp.Table, namespace: str, reading: _Reading) -> None:
    """Qualify a Delta table reference in place, or inline the view it names."""
    if not isinstance(table.this, exp.Identifier):
        raise reading.refuse(
            f"reads a table-valued function ({table.this.sql(dialect=DIALECT)}); a stream's view "
            f"may only use {ALLOWED} over Delta tables"
        )
    if table.catalog and table.catalog.lower() != SESSION_CATALOG:
        raise reading.refuse(f"reads {table.sql(dialect=DIALECT)} from another catalog")
    schema, name = table.db or namespace, table.name
    described = _describe(run, schema, name, reading)
    kind = _table_kind(described)
    alias = table.alias or name
    if kind == "view":
        inner = _expand(run, described, schema, reading.inner(f"{schema}.{name}"))
        table.replace(
            exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias)))
        )
        return
    if kind != "delta":
        raise reading.refuse(
            f"reads {schema}.{name}, a {kind} table; a view stream's tables must be Delta tables "
            "(convert it with CONVERT TO DELTA or recreate it USING delta)"
        )
    table.set("catalog", None)
    table.set("db", exp.to_identifier(schema))
    table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))


def _describe(run: RunSql, schema: str, name: str, reading: _Reading) -> list[Row]:
    try:
        return run(f"describe table extended {quote_path(schema, name)}")
    except SparkUnreachable:
        raise
    except Exception as exc:
        if "TABLE_OR_VIEW_NOT_FOUND" in str(exc):
            raise reading.refuse(
                f"reads {schema}.{name}, which is not there (dropped or renamed). Restore it (its "
                "stream carries on from its offset if it is the same table), or change the query "
                "that reads it"
            ) from exc
        raise reading.refuse(f"reads {schema}.{name}, which cannot be read ({exc})") from exc


def _table_kind(described: list[Row]) -> str:
    """'view', 'delta' or the table's provider in lower case."""
    if (detailed_info(described, "Type") or "").upper() == "VIEW":
        return "view"
    return (detailed_info(described, "Provider") or "unknown").lower()


def inline_ctes(query: exp.Expr) -> exp.Expr:
    """Each WITH of the query replaced by its CTEs, inlined as subqueries where named (the
    innermost WITH first, so a CTE body is complete when it is copied). A CTE sees only the
    CTEs before it: `with c as (select * from t), t as (...)` reads the table t in c."""
    for with_ in reversed(list(query.find_all(exp.With))):
        scope = cast(exp.Expr, with_.parent)
        ctes = list(with_.expressions)
        with_.pop()
        bodies: dict[str, exp.Expr] = {}
        for cte in ctes:
            _replace_references(cte.this, bodies)
            bodies[cte.alias.lower()] = cte.this
        _replace_references(scope, bodies)
    return query


def _replace_references(node: exp.Expr, bodies: dict[str, exp.Expr]) -> None:
    """Each unqualified table `node` names that is a CTE of `bodies`, replaced by the CTE's
    body. The tables are found before any is replaced, so a body put in is not searched again
    (a table it reads may share a later CTE's name)."""
    for table in list(node.find_all(exp.Table)):
        body = None if table.db else bodies.get(table.name.lower())
        if body is not None:
            alias = table.alias or table.name
            table.replace(
                exp.Subquery(this=body.copy(), alias=exp.TableAlias(this=exp.to_identifier(alias)))
            )


def builtin_lookup(run: RunSql) -> Callable[[str], bool]:
    """Whether Spark's registry has a built-in function of that name, asked once per name."""
    known: dict[str, bool] = {}

    def is_builtin(name: str) -> bool:
        if name not in known:
            rows = run(f"show system functions like {string_literal(name)}")
            known[name] = any(str(row.get("function", "")).lower() == name for row in rows)
        return known[name]

    return is_builtin


def spelled_view_key(
    reader: str, unique_key: tuple[str, ...], columns: tuple[str, ...], view: str
) -> tuple[str, ...]:
    """The key columns spelled as the view (`schema.name`, its `columns`) spells them; an
    error naming any that is missing. `reader` names the stream or the changes() call."""
    fix = (
        "Name columns of the view that are unique in it, or give no unique_key (rows then net "
        "as values)."
    )
    return spell_columns(reader, unique_key, columns, f"view {view}", fix)
