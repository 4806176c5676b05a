"""A materialized view's build, decided once.

A query that refreshes incrementally (shape.py) gets an input: a catalog view named
`<model>__mv_input` holding the source columns its select list reads, over its FROM and WHERE.
A view stream named after the model follows that input (its table streams, one per source
table, are `<model>@<schema>.<table>`), consumed by the model as a stream_incremental model
consumes its streams: the target's write and the streams' offsets land in one Delta commit.

- The first build, `--full-refresh`, and a changed definition (the input or the query over it,
  fingerprinted in the target's table properties) rebuild: the input view is (re)created, the
  stream (re)starts at the sources' current versions, and the target is the query over the
  input's rows at those versions.
- A later build with changes writes the changed groups' rows (refresh_sql.py) in one MERGE.
- A build with nothing pending writes nothing.

Any other query refreshes fully, and says why: the model's `refresh` config is `auto` (the
default: incrementally where the query allows), `incremental` (fail instead of refreshing
fully) or `full`.
"""

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.mv import joined_sql
from dbt.adapters.spark_streams.streams.mv.joined_sql import Columns, Relations
from dbt.adapters.spark_streams.streams.mv.refresh_sql import (
    changed_groups_sql,
    first_build_sql,
    kept_from_change,
    kept_merge_sql,
    merge_sql,
)
from dbt.adapters.spark_streams.streams.mv.shape import DIALECT, Full, Shape, query_shape

FINGERPRINT = "dbt_spark_streams.mv_definition"
CONFIG_FINGERPRINT = "dbt_spark_streams.mv_config"
REFRESH_PATH = "dbt_spark_streams.mv_refresh"  # how it refreshes, for explain_stream
RECOMPUTES_INPUT = "dbt_spark_streams.mv_recomputes_input"  # for explain_stream's estimate
RECOMPUTE_KEYS = "dbt_spark_streams.mv_recompute_keys"  # and the ranges it reads through
ON_CONFIGURATION_CHANGE = ("apply", "continue", "fail")
INPUT_SUFFIX = "__mv_input"
REFRESH = ("auto", "incremental", "full")


@dataclass(frozen=True)
class MaterializedViewPlan:
    """What a materialized view's build does: refresh fully (`full` says why) or through its
    input's stream, rebuilding the target or writing the changed groups."""

    model: str
    shape: Shape | None
    full: Full | None
    fingerprint: str = ""
    rebuild: bool = True
    refresh: str = "auto"
    configuration: str = ""  # the fingerprint of the config the table is written with
    warning: str = ""  # a changed configuration left as it is (on_configuration_change)
    because: str = ""  # why a table built from this definition is rebuilt (its columns' types)

    @property
    def incremental(self) -> bool:
        return self.shape is not None

    @property
    def input_name(self) -> str:
        return f"{self.model}{INPUT_SUFFIX}"

    @property
    def joined(self) -> bool:
        """A query with an outer join: each table is followed by a table stream of its own
        (joined_sql.py), not the input view's stream."""
        return bool(self.shape and self.shape.tables)

    @property
    def recomputes_input(self) -> bool:
        """Whether a refresh reads the whole input to recompute groups: always through an outer
        join (joined_sql.py); through the input's view stream (refresh_sql.py) for HAVING or an
        aggregate not kept from the change, or a MIN or MAX, whose group is recomputed when its
        extremum may have been deleted."""
        shape = self.shape
        return shape is not None and (bool(shape.tables) or shape.recomputes_from_input)

    @property
    def recompute_keys(self) -> tuple[tuple[str, str], ...]:
        """The group keys through whose ranges a refresh's recompute can read its input: (the
        input's column, the column the query names) for each group key that is a column as it
        is; none for a query that never recomputes from its input. The table's column behind
        it is found through the input view's lineage (kinds/view_path.py), as a subquery in
        FROM may rename it."""
        shape = self.shape
        if shape is None or shape.tables or not shape.recomputes_from_input:
            return ()
        keys = []
        for key in shape.keys:
            found = re.fullmatch(r"_mv_c(\d+)", key)
            source = (
                sqlglot.parse_one(shape.columns[int(found[1])], read=DIALECT) if found else None
            )
            if isinstance(source, exp.Column):
                keys.append((key, source.name))
        return tuple(keys)

    @property
    def tables(self) -> list[dict[str, str]]:
        """A joined query's tables: alias, schema, name, and the name of its stream."""
        if self.shape is None:
            return []
        return [
            {
                "alias": alias,
                "schema": schema,
                "name": name,
                "stream": f"{self.model}@{schema}.{name}",
            }
            for alias, schema, name in self.shape.tables
        ]

    @property
    def input_sql(self) -> str:
        return self.shape.input_sql if self.shape else ""

    @property
    def reason(self) -> str:
        return self.full.sentence() if self.full else ""

    @property
    def properties(self) -> dict[str, str]:
        """The target's table properties that say which definition built it."""
        if not self.fingerprint:
            return {}
        return {
            FINGERPRINT: self.fingerprint,
            CONFIG_FINGERPRINT: self.configuration,
            REFRESH_PATH: self.path,
            RECOMPUTES_INPUT: str(self.recomputes_input).lower(),
            RECOMPUTE_KEYS: json.dumps([list(key) for key in self.recompute_keys]),
        }

    @property
    def path(self) -> str:
        """How a refresh brings the table up to date, in a few words."""
        shape = self.shape
        if shape is None:
            return f"refreshes fully: {self.reason}"
        if shape.tables:
            return "incremental: the groups each table's change may touch are recomputed"
        if shape.recompute_groups:
            return "incremental: the groups the change touches are recomputed"
        if shape.recomputes_from_input:
            return (
                "incremental: its aggregates are kept from the change, and a group whose MIN "
                "or MAX may have been deleted is recomputed"
            )
        return "incremental: its aggregates are kept from the change"

    def first_sql(self, rows: str, names: list[str]) -> str:
        """The target's rows: the query over the input's rows (the stream's first rows)."""
        return first_build_sql(self._shape(), rows, names)

    def refresh_sql(
        self, changes: str, target: str, names: list[str], rows: str, broadcast: bool = False
    ) -> str:
        """The MERGE bringing the changed groups up to date (`broadcast`: the change is known
        small, so are the groups it touches)."""
        shape = self._shape()
        if kept_from_change(shape):
            return kept_merge_sql(shape, changes, target, list(names))
        rows = changed_groups_sql(shape, changes, target, names, rows, broadcast)
        return merge_sql(shape, target, names, rows)

    def joined_first_sql(self, pinned: Relations, names: list[str]) -> str:
        """A joined query's rows: the query over its tables at the build's pins."""
        return joined_sql.first_build_sql(self._shape(), pinned, names)

    def joined_refresh_sql(
        self,
        target: str,
        names: list[str],
        pinned: Relations,
        changes: Relations,
        columns: Columns,
    ) -> str:
        """The MERGE of a joined query's groups its tables' changes may touch, recomputed."""
        shape = self._shape()
        rows = joined_sql.changed_groups_sql(shape, names, pinned, changes, columns)
        return merge_sql(shape, target, names, rows)

    def refreshing_fully(self, reason: str) -> "MaterializedViewPlan":
        """This plan refreshing fully instead, for `reason` (known only from the catalog)."""
        if self.refresh == "incremental":
            raise _refused(self.model, reason)
        return MaterializedViewPlan(self.model, None, Full(reason), refresh=self.refresh)

    def _shape(self) -> Shape:
        if self.shape is None:
            raise StreamError(f"Model {self.model} refreshes fully: {self.reason}.")
        return self.shape


@dataclass(frozen=True)
class Configuration:
    """The config a table is written with (partition_by, liquid_clustered_by, tblproperties),
    as `now` and as the table was `built` with (None: not known), and what a change of it
    does (dbt's on_configuration_change)."""

    now: str = ""
    built: str | None = None
    on_change: str = "apply"


def plan_materialized_view(
    model: str,
    sql: str,
    refresh: str,
    built_from: str | None,
    full_refresh: bool,
    is_builtin: Callable[[str], bool],
    configuration: Configuration | None = None,
) -> MaterializedViewPlan:
    """The plan of a build whose target was built from the definition `built_from` (its
    fingerprint; None: no target, or one this materialization did not build)."""
    configuration = configuration or Configuration()
    if refresh not in REFRESH:
        raise StreamError(
            f"Model {model}: refresh '{refresh}' is not one of {', '.join(REFRESH)}."
        )
    shape = query_shape(sql, is_builtin) if refresh != "full" else Full("refresh: 'full'")
    if isinstance(shape, Full):
        if refresh == "incremental":
            raise _refused(model, shape.sentence())
        return MaterializedViewPlan(model, None, shape)
    text = f"{shape.input_sql}\n{shape.query}" if not shape.tables else shape.query
    fingerprint = fingerprint_of(text)
    rebuild = full_refresh or built_from != fingerprint
    warning = ""
    if not rebuild and configuration.built not in (None, configuration.now):
        rebuild, warning = _configuration_changed(model, configuration.on_change)
    return MaterializedViewPlan(
        model, shape, None, fingerprint, rebuild, refresh, configuration.now, warning
    )


def columns_changed(query: list[tuple[str, str]], table: list[tuple[str, str]]) -> str:
    """What differs between the query's columns (name, type) as Spark analyzes it now and
    the table's built from it (its kept state `_mv_...` aside), in a few words; "" when
    nothing does. A source whose column was widened (int to bigint) changes the type of an
    aggregate over it, which the table's column could not hold."""
    kept = {name.lower(): kind for name, kind in table if not name.lower().startswith("_mv_")}
    changes = []
    for name, kind in query:
        before = kept.pop(name.lower(), None)
        if before is None:
            changes.append(f"{name} added")
        elif before.lower() != kind.lower():
            changes.append(f"{name} from {before} to {kind}")
    changes += [f"{name} gone" for name in kept]
    return ", ".join(changes)


def _configuration_changed(model: str, on_change: str) -> tuple[bool, str]:
    """dbt's on_configuration_change: `apply` rebuilds the table with its new configuration,
    `continue` refreshes it as it is and says so, `fail` stops before anything is written."""
    if on_change not in ON_CONFIGURATION_CHANGE:
        raise StreamError(
            f"Model {model}: on_configuration_change '{on_change}' is not one of "
            f"{', '.join(ON_CONFIGURATION_CHANGE)}."
        )
    if on_change == "fail":
        raise StreamError(
            f"Model {model}: its configuration (partition_by, liquid_clustered_by or "
            "tblproperties) changed since its table was built, and on_configuration_change is "
            "'fail', so nothing was written. Run it with --full-refresh, or set "
            "on_configuration_change='apply' to rebuild it when its configuration changes."
        )
    if on_change == "continue":
        return False, (
            f"Model {model}: its configuration changed since its table was built; "
            "on_configuration_change is 'continue', so it refreshes the table as it is. Run it "
            "with --full-refresh to rebuild it with the new configuration."
        )
    return True, ""


def _refused(model: str, reason: str) -> StreamError:
    """refresh: 'incremental' on a query that cannot refresh incrementally."""
    return StreamError(
        f"Model {model} cannot refresh incrementally: {reason}. Rewrite that part of its "
        "query, or set refresh: 'auto' to refresh it fully when it runs."
    )


def fingerprint_of(text: str) -> str:
    """A short fingerprint of a definition or configuration, kept in the table's properties."""
    return hashlib.sha1(text.encode()).hexdigest()[:16]
