"""apply_cdc with scd_type 2 and `track_history_columns` (or `track_history_except_columns`):
a version opens where a tracked column changes; an event that changes only other columns
updates the version it falls in (its latest event's values win).

Placing a late event exactly needs the events a version absorbed (an event inside a version
can split it, and the split's first half keeps that half's values, which the table no longer
holds), so the model's events are kept in `<model>__cdc_events` (key, columns, sequence,
whether a delete), appended before the target's MERGE as tombstones are: a build that fails
after the append and runs again appends the same events, which count once (one event per key
and sequence). A build recomputes the touched keys' versions from their kept events (and,
where none are kept, as after a `dbt clone`, from their stored versions as scd2.py does), then
inserts the new versions, updates those whose end or values moved, and deletes those a late
event merged away, in one MERGE.
"""

from dataclasses import dataclass

from dbt.adapters.spark_streams.streams.cdc.config import SEQUENCE_COLUMN
from dbt.adapters.spark_streams.streams.cdc.scd1 import DELETE, SEQ
from dbt.adapters.spark_streams.streams.cdc.scd2 import END, START, Scd2Query
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote

DROP = "_cdc_drop"  # a MERGE source row that deletes a stored version a late event merged away


@dataclass(frozen=True)
class TrackedScd2Query(Scd2Query):
    """One model's history whose versions open where a tracked column changes."""

    events_table: str = ""

    @property
    def event_columns(self) -> list[str]:
        """The kept events' columns, the key's first: Delta keeps statistics on a table's first
        32 columns only, and the events are read and clustered by key (tombstones.py)."""
        return [*self.key, *self.values]

    def events_sql(self, source: str, create: bool) -> str:
        """The change set's events kept: the table created from them (a first build), or
        appended to it (new columns added and widened columns widened, as the target's
        are)."""
        rows = (
            f"select {column_list(self.event_columns)}, {SEQ} as {quote(SEQUENCE_COLUMN)}, "
            f"{DELETE} from ({self._unique(source)})"
        )
        if create:
            return (
                f"create or replace table {self.events_table} using delta "
                "tblproperties ('delta.enableTypeWidening' = 'true') as " + rows
            )
        return (
            f"merge with schema evolution into {self.events_table} as e using ({rows}) as s "
            "on false when not matched then insert *"
        )

    def _same(self, left: str, right: str, columns: list[str]) -> str:
        """`left` and `right` hold equal `columns` (NULLs equal); true where there are none."""
        if not columns:
            return "true"
        return (
            f"struct({column_list(columns, left + '.')}) <=> "
            f"struct({column_list(columns, right + '.')})"
        )

    def _chain(self, source: str, target: str | None, tombstones: str | None) -> str:
        """WITH-clauses ending in `_cdc_chain`: the touched keys' versions, recomputed from
        their events, consecutive upserts with equal tracked columns folded into one."""
        keys, columns = column_list(self.key), column_list(self.columns)
        ctes, ranked = self._ranked(source, target, tombstones)
        if target is not None:  # the kept events first (rank 0): they are what happened
            touched = f"({keys}) in (select {keys} from _cdc_events)"
            ranked.append(
                f"select {columns}, {quote(SEQUENCE_COLUMN)}, {DELETE}, 0, null "
                f"from {self.events_table} t where {touched}{self.ranges}"
            )
        tracked = self.config.tracked(self.values)
        key_order = f"partition by {keys} order by {SEQ}"
        changed = f"not ({self._same('o', 'o._cdc_prev', tracked)})" if tracked else "false"
        ctes += [
            *self._one_per_sequence(ranked),
            # a version opens at a delete, after one, at a key's first event, and where a
            # tracked column differs from the event before
            f"_cdc_lagged as (select *, lag(struct(*)) over ({key_order}) as _cdc_prev "
            "from _cdc_one)",
            f"_cdc_opened as (select *, coalesce({DELETE} or _cdc_prev.{DELETE} or "
            f"_cdc_prev is null or {changed}, true) as _cdc_opens from _cdc_lagged o)",
            f"_cdc_grouped as (select *, sum(if(_cdc_opens, 1, 0)) over ({key_order} rows "
            "between unbounded preceding and current row) as _cdc_group from _cdc_opened)",
            f"_cdc_folded as (select {keys}, max_by(struct({columns}), {SEQ}) as _cdc_row, "
            f"min({SEQ}) as {SEQ}, bool_or({DELETE}) as {DELETE} from _cdc_grouped "
            f"group by {keys}, _cdc_group)",
            f"_cdc_chain as (select {column_list(self.columns, '_cdc_row.')}, {SEQ} as "
            f"{START}, lead({SEQ}) over ({key_order}) as {END}, {DELETE} from _cdc_folded)",
        ]
        return "with " + ", ".join(ctes)

    def merge_sql(self, source: str, target: str, tombstones: str, truncated: bool = False) -> str:
        """The versions that are new or whose end or values moved, and a delete of each
        stored version no longer in the history, MERGEd by key and start."""
        written = [*self.columns, START, END]
        joined, on = self.key_match("c", "v", START), self.key_match("t", "s", START)
        moved = f"not ({self._same('c', 'v', [*self.values, END])})"
        updates = ", ".join(f"t.{quote(c)} = s.{quote(c)}" for c in [*self.values, END])
        # one join of the history's versions with the stored ones (Spark computes a WITH-clause
        # again wherever it is named): a version new or moved is written, a stored one no
        # longer in the history is deleted (its row, with _cdc_drop)
        chosen = ", ".join(
            f"if(c.{quote(START)} is null, v.{quote(w)}, c.{quote(w)}) as {quote(w)}"
            for w in written
        )
        return (
            f"merge into {target} as t\nusing ({self._chain(source, target, tombstones)}, "
            f"_cdc_kept as (select * from _cdc_chain where not {DELETE}) "
            f"select {chosen}, c.{quote(START)} is null as {DROP} from _cdc_kept c "
            f"full join _cdc_versions v on {joined} "
            f"where c.{quote(START)} is null or v.{quote(START)} is null or {moved}) as s\n"
            f"on {on}{self.ranges}\n"
            f"when matched and s.{DROP} then delete\n"
            f"when matched then update set {updates}\n"
            f"when not matched and not s.{DROP} then insert ({column_list(written)}) "
            f"values ({column_list(written, 's.')})"
        )
