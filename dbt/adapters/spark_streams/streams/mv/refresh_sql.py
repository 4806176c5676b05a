"""The SQL of a materialized view's refresh: its input, its first build, and the rows that
bring the changed groups up to date.

The target holds one row per group: the query's own columns, then the state the refresh keeps
beside them (as pg_ivm keeps `__ivm_count__`): `_mv_rows`, the group's input rows (a group
with none left is deleted); per argument of a SUM, AVG or COUNT, `_mv_nn_<j>`, its values that
are not NULL (a SUM of none is NULL); per argument of an AVG, `_mv_sum_<j>`, their sum.

The input is the query's FROM and WHERE, projected to its group keys (`_mv_k<i>`) and the
arguments of its aggregates (`_mv_a<j>`); a view stream follows its changes as signed rows
(`metadata_action` 'INSERT' or 'DELETE', as every stream's rows). From those, per group:

- COUNT, SUM and AVG add the change's signed counts and sums to the kept ones;
- MIN and MAX take the least (greatest) of the kept value and the inserted ones, unless a
  deleted value reaches the kept extremum: then the group is recomputed;
- with HAVING or any other aggregate, every changed group is recomputed;

a group is recomputed by the query itself, its input restricted to the groups' keys (and read
at the build's pins). `changed_groups_sql` returns one row per changed group: its columns as
the target's, and `_mv_keep` (false: the group is gone, or fails HAVING).

A query whose aggregates are all kept from the change (COUNT, SUM, AVG: no group is ever
recomputed) refreshes by `kept_merge_sql` instead: the MERGE's source is the change's deltas
per group alone, and its clauses add them to the target's row, so the target is read by the
MERGE only (side by side at 20,000,000 rows, 18% less time than joining the target into the
source first).
"""

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from dbt.adapters.spark_streams.streams.mv.shape import DIALECT, Aggregate, Shape
from dbt.adapters.spark_streams.streams.sql.quoting import quote

KEEP = "_mv_keep"
ROWS = "_mv_rows"
INSERT = "metadata_action = 'INSERT'"


def key(i: int) -> str:
    return f"_mv_k{i}"


def arg(j: int) -> str:
    return f"_mv_a{j}"


def _kinds(shape: Shape, argument: str) -> set[str]:
    """The maintained aggregates of one argument."""
    return {o.aggregate.kind for o in shape.outputs if o.aggregate and o.aggregate.arg == argument}


def hidden_columns(shape: Shape) -> list[tuple[str, str]]:
    """The kept state's columns and how the query computes them: (name, aggregate SQL)."""
    columns = [(ROWS, "count(*)")]
    for j, argument in enumerate(shape.args):
        kinds = _kinds(shape, argument)
        if kinds & {"sum", "avg", "count"}:
            columns.append((f"_mv_nn_{j}", f"count({argument})"))
        if "avg" in kinds:
            columns.append((f"_mv_sum_{j}", f"sum({argument})"))
    return columns


def input_sql(shape: Shape) -> str:
    """The input the view stream follows: the source columns the query reads, one row per
    row of its FROM and WHERE."""
    return shape.input_sql


def first_build_sql(shape: Shape, rows: str, names: list[str]) -> str:
    """The query over the input's rows `rows` (at the build's pins), its columns named
    `names` (as Spark names the model's own), with the kept state's columns after them."""
    return _over(named_query(shape, names), rows)


def changed_groups_sql(
    shape: Shape, changes: str, target: str, names: list[str], rows: str, broadcast: bool = False
) -> str:
    """One row per group the change touches, as the target's columns `names` (the query's,
    then the kept state's) and `_mv_keep`. `changes`: the input's signed change rows;
    `rows`: the input's rows at the build's pins, from which flagged groups are recomputed;
    `broadcast`: the change is known small (broadcast_groups)."""
    outputs = names[: len(shape.outputs)]
    joined = _joined(shape, changes, target, outputs)
    return (
        f"with _mv_j as ({joined}), "
        f"_mv_f as (select {_key_list(shape)} from _mv_j where _mv_flag), "
        f"_mv_r as ({_recompute_sql(shape, rows, outputs, broadcast)}) "
        f"{_chosen_rows(shape, outputs, broadcast)}"
    )


def _chosen_rows(shape: Shape, outputs: list[str], broadcast: bool) -> str:
    """Each changed group's row of `_mv_j`, or where it is flagged its recomputed row of
    `_mv_r` (none: the group is gone). One join, so the change's state is named twice (here
    and in `_mv_f`) where a union of the unflagged rows and the recomputed ones named it three
    times: Spark inlines a WITH clause at each name, and each copy read and grouped the change
    again. `broadcast`: the recomputed groups, at most the change's rows, are broadcast."""
    hidden = [name for name, _ in hidden_columns(shape)]
    items = [
        f"j.{quote(n)}" if o.key is not None else _chosen(quote(n))
        for o, n in zip(shape.outputs, outputs, strict=True)
    ]
    items += [_chosen(name) for name in hidden]
    items.append(f"case when j._mv_flag then r.{ROWS} is not null else j.{KEEP} end as {KEEP}")
    keys_out = _keys_out(shape, outputs)
    on = " and ".join(["j._mv_flag", *_same_group(keys_out, "r", "j")])
    hint = "/*+ BROADCAST(r) */ " if broadcast else ""
    return f"select {hint}{', '.join(items)} from _mv_j j left join _mv_r r on {on}"


def _chosen(column: str) -> str:
    return f"case when j._mv_flag then r.{column} else j.{column} end as {column}"


def kept_from_change(shape: Shape) -> bool:
    """Whether every aggregate of the query is kept from the change (no group is ever
    recomputed): its refresh is kept_merge_sql."""
    return not shape.recomputes_from_input


@dataclass(frozen=True)
class KeptMerge:
    """kept_merge_sql's parts, over the target's row `t` and its group's deltas `s`: the
    source (the deltas), the match, when a matched group is gone, each column's new value
    (`updates`), and a new group's row and when it is inserted."""

    source: str
    on: str
    gone: str
    updates: list[tuple[str, str]]
    inserts: list[tuple[str, str]]
    inserted: str


def kept_merge(shape: Shape, changes: str, names: list[str]) -> KeptMerge:
    """The parts of the MERGE adding the deltas of `changes` (`_deltas`, its source) to the
    target's groups: the expressions of `_joined`, with the target's row `t` for the kept one
    (none for a new group) and the deltas `s`."""
    outputs = names[: len(shape.outputs)]
    keys_out = _keys_out(shape, outputs)
    on = " and ".join(_same_group(keys_out, "t", "s")) or "true"
    hidden = [name for name, _ in hidden_columns(shape)]
    updates = [
        (quote(n), _updated(shape, i, outputs, "t", "s"))
        for i, n in enumerate(outputs)
        if shape.outputs[i].key is None
    ]
    updates += [(name, _updated_hidden(name, "t", "s")) for name in hidden]
    inserts = [(quote(n), _updated(shape, i, outputs, None, "s")) for i, n in enumerate(outputs)]
    inserts += [(name, _updated_hidden(name, None, "s")) for name in hidden]
    gone = f"t.{ROWS} + s._d_rows <= 0" if shape.keys else "false"
    inserted = "s._d_rows > 0" if shape.keys else "true"
    return KeptMerge(_deltas(shape, changes), on, gone, updates, inserts, inserted)


def kept_merge_sql(shape: Shape, changes: str, target: str, names: list[str]) -> str:
    """The refresh of a query kept from the change (kept_from_change): one MERGE whose source
    is the change's deltas per group. A matched group whose rows all went is deleted (a global
    aggregate's one row never goes); a new group with rows is inserted (a group the target
    does not hold can only gain rows)."""
    parts = kept_merge(shape, changes, names)
    sets = ", ".join(f"t.{c} = {e}" for c, e in parts.updates)
    columns = ", ".join(c for c, _ in parts.inserts)
    values = ", ".join(e for _, e in parts.inserts)
    deleted = f"when matched and {parts.gone} then delete " if shape.keys else ""
    return (
        f"merge into {target} as t using ({parts.source}) as s on {parts.on} "
        f"{deleted}"
        f"when matched then update set {sets} "
        f"when not matched and {parts.inserted} then insert ({columns}) values ({values})"
    )


def merge_sql(shape: Shape, target: str, names: list[str], rows: str) -> str:
    """The MERGE writing the changed groups' rows (`rows`, from changed_groups_sql).

    A row not kept whose group the target does not hold is left out of the MERGE's source:
    Delta 4.4 fails a MERGE into a table with deletion vectors ("Unexpected row: did not
    match any merge clause") when such a row meets no clause while another row is deleted."""
    outputs = names[: len(shape.outputs)]
    keys_out = _keys_out(shape, outputs)
    on = " and ".join(f"t.{quote(k)} <=> s.{quote(k)}" for k in keys_out) or "true"
    if keys_out:
        held = " and ".join(f"o.{quote(k)} <=> c.{quote(k)}" for k in keys_out)
        rows = (
            f"select c.* from ({rows}) as c left join {target} as o on {held} "
            f"where c.{KEEP} or o.{ROWS} is not null"
        )
    columns = [quote(n) for n in names]
    sets = ", ".join(f"t.{c} = s.{c}" for c in columns)
    values = ", ".join(f"s.{c}" for c in columns)
    return (
        f"merge into {target} as t using ({rows}) as s on {on} "
        f"when matched and not s.{KEEP} then delete "
        f"when matched then update set {sets} "
        f"when not matched and s.{KEEP} then insert ({', '.join(columns)}) values ({values})"
    )


def _keys_out(shape: Shape, outputs: list[str]) -> list[str]:
    """The names of the outputs that are the query's group keys, in the keys' order."""
    return [outputs[shape.key_output(i)] for i in range(len(shape.keys))]


def _same_group(keys_out: list[str], named: str, keyed: str) -> list[str]:
    """A row of `named` (the group keys under the target's names `keys_out`) and a row of
    `keyed` (the keys as `_mv_k<i>`) of one group: NULL keys equal."""
    return [f"{named}.{quote(k)} <=> {keyed}.{key(i)}" for i, k in enumerate(keys_out)]


def _key_list(shape: Shape, prefix: str = "") -> str:
    return ", ".join(f"{prefix}{key(i)}" for i in range(len(shape.keys))) or "1 as _mv_one"


def _deltas(shape: Shape, changes: str) -> str:
    """Per changed group: the signed count of rows, and per argument what its aggregates
    need: the signed count of values and their signed sum (COUNT, SUM, AVG), the least and
    greatest inserted and deleted value (MIN, MAX)."""
    sign = f"case when {INSERT} then 1 else -1 end"
    items = [f"sum({sign}) as _d_rows"]
    for j, argument in enumerate(shape.args):
        a, kinds = arg(j), _kinds(shape, argument)
        if kinds & {"sum", "avg", "count"}:
            items += [
                f"sum(case when {a} is null then 0 else {sign} end) as _d_nn_{j}",
                f"sum(case when {INSERT} then {a} else -{a} end) as _d_sum_{j}",
            ]
        if kinds & {"min", "max"}:
            items += [
                f"min(case when {INSERT} then {a} end) as _i_min_{j}",
                f"max(case when {INSERT} then {a} end) as _i_max_{j}",
                f"min(case when not ({INSERT}) then {a} end) as _x_min_{j}",
                f"max(case when not ({INSERT}) then {a} end) as _x_max_{j}",
            ]
    computed = [f"{k} as {key(i)}" for i, k in enumerate(shape.keys)]
    computed += [f"{a} as {arg(j)}" for j, a in enumerate(shape.args)]
    changes = f"(select {', '.join([*computed, 'metadata_action'])} from {changes}) as _mv_c"
    keys = f"{_key_list(shape)}, " if shape.keys else ""
    # a global aggregate of no change rows would still be one row, of NULLs
    group = f" group by {_key_list(shape)}" if shape.keys else " having count(*) > 0"
    return f"select {keys}{', '.join(items)} from {changes}{group}"


def _joined(shape: Shape, changes: str, target: str, outputs: list[str]) -> str:
    """Per changed group: its keys, its row maintained from the change (the kept values, o,
    plus the deltas, d; o is NULL for a new group), whether to keep it, and whether it is
    recomputed instead (`_mv_flag`)."""
    keys_out = _keys_out(shape, outputs)
    on = " and ".join(_same_group(keys_out, "o", "d")) or "true"
    flags = ["true"] if shape.recompute_groups else _extremum_flags(shape, outputs) or ["false"]
    flag = " or ".join(f"coalesce({f}, false)" for f in flags)
    rows = f"coalesce(o.{ROWS}, 0) + d._d_rows"
    items = [f"d.{key(i)}" for i in range(len(shape.keys))]
    items += [f"{_updated(shape, i, outputs)} as {quote(n)}" for i, n in enumerate(outputs)]
    items += [f"{_updated_hidden(name)} as {name}" for name, _ in hidden_columns(shape)]
    keep = "true" if not shape.keys else f"{rows} > 0"
    items += [f"{keep} as {KEEP}", f"{flag} as _mv_flag"]
    deltas = _deltas(shape, changes)
    return f"select {', '.join(items)} from ({deltas}) d left join {target} o on {on}"


def _extremum_flags(shape: Shape, outputs: list[str]) -> list[str]:
    """Per MIN (MAX): a deleted value at or below (above) the kept one may have been it."""
    flags = []
    for output, name in zip(shape.outputs, outputs, strict=True):
        aggregate = output.aggregate
        if aggregate and aggregate.kind in ("min", "max"):
            j = shape.args.index(aggregate.arg)
            compare = "<=" if aggregate.kind == "min" else ">="
            flags.append(f"d._x_{aggregate.kind}_{j} {compare} o.{quote(name)}")
    return flags


def _kept(row: str | None, column: str) -> str:
    """A column of the kept row `row` (None: a new group's, which has none)."""
    return "null" if row is None else f"{row}.{column}"


def _updated(shape: Shape, i: int, outputs: list[str], o: str | None = "o", d: str = "d") -> str:
    """Output i of a group maintained from the change: the kept value (of row `o`) plus the
    delta (of row `d`)."""
    output, old = shape.outputs[i], _kept(o, quote(outputs[i]))
    if output.key is not None:
        return f"{d}.{key(output.key)}"
    aggregate: Aggregate = output.aggregate  # type: ignore[assignment]
    if aggregate.kind == "count_star":
        return f"coalesce({old}, 0) + {d}._d_rows"
    if aggregate.kind == "other":
        return "null"  # recomputed
    j = shape.args.index(aggregate.arg)
    nn = f"coalesce({_kept(o, f'_mv_nn_{j}')}, 0) + {d}._d_nn_{j}"
    if aggregate.kind == "count":
        return f"coalesce({old}, 0) + {d}._d_nn_{j}"
    if aggregate.kind == "sum":
        total = f"coalesce({old}, 0) + coalesce({d}._d_sum_{j}, 0)"
        return f"case when {nn} = 0 then null else {total} end"
    if aggregate.kind == "avg":
        total = f"coalesce({_kept(o, f'_mv_sum_{j}')}, 0) + coalesce({d}._d_sum_{j}, 0)"
        return f"case when {nn} = 0 then null else ({total}) / ({nn}) end"
    inserted, less = f"{d}._i_{aggregate.kind}_{j}", "<" if aggregate.kind == "min" else ">"
    return (
        f"case when {old} is null then {inserted} when {inserted} is null then {old} "
        f"when {inserted} {less} {old} then {inserted} else {old} end"
    )


def _updated_hidden(name: str, o: str | None = "o", d: str = "d") -> str:
    if name == ROWS:
        return f"coalesce({_kept(o, ROWS)}, 0) + {d}._d_rows"
    kind, j = name.rsplit("_", 1)
    nn = f"coalesce({_kept(o, f'_mv_nn_{j}')}, 0) + {d}._d_nn_{j}"
    if kind == "_mv_nn":
        return nn
    total = f"coalesce({_kept(o, name)}, 0) + coalesce({d}._d_sum_{j}, 0)"
    return f"case when {nn} = 0 then null else {total} end"


def _recompute_sql(shape: Shape, rows: str, outputs: list[str], broadcast: bool) -> str:
    """The query over the input's rows, restricted to the groups flagged for recompute
    (`_mv_f`, one row per group: joined, it repeats no row), its columns named as the
    target's, with the kept state. A join, not EXISTS: Delta refuses a MERGE whose source has
    a subquery reading the target ("Table does not support reads")."""
    match = " and ".join(f"f.{key(i)} <=> ({k})" for i, k in enumerate(shape.keys)) or "true"
    select = named_query(shape, outputs).join("_mv_f f", on=match, copy=False, dialect=DIALECT)
    return _over(broadcast_groups(select, "f") if broadcast else select, rows)


def broadcast_groups(select: exp.Select, alias: str) -> exp.Select:
    """`select` hinting Spark to broadcast its join's side `alias`, the groups a change
    touches. Spark knows nothing of their number (they come from the change feed) and would
    shuffle the whole input to join them: at 20,000,000 rows that shuffle was most of a
    recompute of a dozen groups. Hinted only where the change's rows, which bound the groups,
    are known to be under the model's broadcast_change_rows (streams/delta/change_size.py)."""
    hint = select.args.get("hint") or exp.Hint(expressions=[])
    hint.append("expressions", exp.JoinHint(this="BROADCAST", expressions=[exp.to_table(alias)]))
    select.set("hint", hint)
    return select


def named_query(shape: Shape, names: list[str]) -> exp.Select:
    """The model's query (over its input, or as written for a joined query), its outputs
    named `names`, with the kept state's columns; a SELECT DISTINCT written as the GROUP BY it
    is (so that the kept state's aggregates count per distinct row)."""
    select = sqlglot.parse_one(shape.query, read=DIALECT)
    assert isinstance(select, exp.Select)
    if select.args.get("distinct"):
        select.set("distinct", None)
        select = select.group_by(*shape.keys, copy=False, dialect=DIALECT)
    computed = [e.this if isinstance(e, exp.Alias) else e for e in select.expressions]
    items = [f"{c.sql(DIALECT)} as {quote(n)}" for c, n in zip(computed, names, strict=True)]
    items += [f"{sql} as {name}" for name, sql in hidden_columns(shape)]
    return select.select(*items, append=False, copy=False, dialect=DIALECT)


def recomputed_rows(shape: Shape, outputs: list[str], groups: str, recomputed: str) -> str:
    """One row per group of `groups` (its keys `_mv_k<i>`), from `recomputed` (the query's
    rows, named as the target's columns `outputs` and the kept state's): a group the query no
    longer yields is not kept."""
    hidden = [name for name, _ in hidden_columns(shape)]
    items = [
        f"g.{key(o.key)} as {quote(n)}" if o.key is not None else f"r.{quote(n)}"
        for o, n in zip(shape.outputs, outputs, strict=True)
    ]
    items += [f"r.{name}" for name in hidden] + [f"r.{ROWS} is not null as {KEEP}"]
    keys_out = _keys_out(shape, outputs)
    on = " and ".join(_same_group(keys_out, "r", "g")) or "true"
    return f"select {', '.join(items)} from {groups} g left join {recomputed} r on {on}"


def _over(select: exp.Select, rows: str) -> str:
    """`select` (reading `_mv_input`) over the input's rows `rows`, whose SQL (the engine's)
    is put in as text, not parsed."""
    placeholder = "__mv_input_rows__"
    select = select.from_(exp.to_table(placeholder).as_("_mv_input"), copy=False)
    return select.sql(DIALECT).replace(placeholder, f"({rows})")
