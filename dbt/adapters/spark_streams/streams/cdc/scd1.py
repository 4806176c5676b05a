"""The SQL of apply_cdc (config.py): change events applied to a table of current state.

For each key the build considers the key's state (its target row and its newest tombstone,
each with its sequence) and the events of the change set newer than both; the newest of
those wins. With ignore_null_updates each column takes the newest non-null value after the
newest delete among them, so partial updates compose in sequence order. An event no newer
than the key's state is a duplicate or a late event: ignored. Events of one key and sequence
apply once (a delete first, then the greatest row).

Deletes are kept as tombstones (key, sequence, when) in a table beside the target, written
before the target's MERGE and never rewritten by it: a tombstone is a delete event of the
change set, so a build that fails after writing them and runs again computes the same state
(the tombstone and the event are the same delete). The target's MERGE is the build's commit,
with the streams' offsets.

A truncate (apply_as_truncates) at sequence T deletes every key whose state is no newer than T,
and no event at or before T applies after it: its tombstone is a row with NULL keys, and the
newest such sequence (the change set's or a stored one) is the cut every event must be newer
than. A build whose events truncate MERGEs, beside its events, a delete of each target row at
or before the cut that no event of the build writes.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import sqlglot
from sqlglot import exp

from dbt.adapters.spark_streams.streams.cdc.config import (
    DEBEZIUM_OPS,
    SEQUENCE_COLUMN,
    CdcConfig,
)
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote

SEQ, DELETE, TRUNCATE = "_cdc_seq", "_cdc_delete", "_cdc_truncate"
CUT_ROW = "_cdc_cut_row"  # a MERGE source row that deletes a target row a truncate ended
CHECK_FAILED = "apply_cdc: a bad event"  # checked_tombstones_sql's error; check_sql says which


@dataclass(frozen=True)
class CdcQuery:
    """One model's apply_cdc: its key, the columns its target keeps, and its config."""

    key: tuple[str, ...]
    columns: tuple[str, ...]  # the target's columns (the key's among them), no sequence
    config: CdcConfig
    has_action: bool  # the change set has metadata_action (a stream's rows, not a peek's)
    # ` and (t.key between ...)`: the change set's key ranges, named where the build reads the
    # target (alias t) so Delta skips its other files; '' for none (and with a truncate)
    ranges: str = ""
    sequence_columns: ClassVar[tuple[str, ...]] = (SEQUENCE_COLUMN,)  # of the sequence's type

    @property
    def target_sequence(self) -> str:
        """The target's column holding a row's sequence."""
        return SEQUENCE_COLUMN

    def check_target(self, model: str, target: str, columns: Sequence[str]) -> None:
        """Before a write: the target was built by apply_cdc of this scd_type (another
        strategy or type built it without the column holding a row's sequence)."""
        if self.target_sequence.lower() not in {column.lower() for column in columns}:
            raise StreamError(
                f"Model {model}: the target {target} has no {self.target_sequence} column, so "
                f"it was not built by apply_cdc with scd_type {self.config.scd_type}. Rebuild "
                "it with --full-refresh."
            )

    def key_match(self, left: str, right: str, *more: str) -> str:
        """`left.k = right.k` for each key column (and each of `more`): keys are never NULL."""
        return " and ".join(f"{left}.{quote(k)} = {right}.{quote(k)}" for k in (*self.key, *more))

    def _sets(self) -> str:
        """A MERGE's update of a row: its values and its sequence."""
        return ", ".join(
            [f"t.{quote(c)} = s.{quote(c)}" for c in self.values]
            + [f"t.{quote(SEQUENCE_COLUMN)} = s.{SEQ}"]
        )

    @property
    def values(self) -> list[str]:
        return [column for column in self.columns if column.lower() not in self._keys]

    @property
    def _keys(self) -> set[str]:
        return {key.lower() for key in self.key}

    @property
    def truncates(self) -> bool:
        return self.config.apply_as_truncates is not None

    @property
    def known_ops(self) -> tuple[str, ...]:
        """The Debezium ops this model applies: a truncate's too where it has truncates."""
        return (*DEBEZIUM_OPS, "t") if self.truncates else DEBEZIUM_OPS

    def _null_values(self, prefix: str = "") -> str:
        """The columns of a row that only names its key: the key's (from `prefix`), NULLs."""
        return ", ".join(
            f"{prefix}{quote(c)}" if c.lower() in self._keys else f"null as {quote(c)}"
            for c in self.columns
        )

    def _is_bad(self) -> str:
        keys = [f"{quote(key)} is null" for key in self.key]
        if self.truncates:  # a truncate names no key
            keys = [f"(not {TRUNCATE} and ({' or '.join(keys)}))"]
        nulls = [*keys, f"{SEQ} is null"]
        nulls += [f"{SEQ}.{quote(field)} is null" for field in self._sequence_fields()]
        if self.config.cdc_format:
            ops = ", ".join(f"'{op}'" for op in self.known_ops)
            nulls.append(f"coalesce(op not in ({ops}), true)")
        return " or ".join(nulls)

    def _sequence_fields(self) -> list[str]:
        """A struct sequence's fields (`struct(ts, lsn)`: ts and lsn): a NULL in one is as
        bad as a NULL sequence (it would order before every value)."""
        try:
            parsed = sqlglot.parse_one(self.config.sequence_by, read="spark")
        except sqlglot.errors.ParseError:
            return []
        if not isinstance(parsed, exp.Struct):
            return []
        names = [
            field.this.name if isinstance(field, exp.PropertyEQ) else field.alias_or_name
            for field in parsed.expressions
        ]
        return [name or f"col{i + 1}" for i, name in enumerate(names)]  # Spark's own names

    def events(self, source: str) -> str:
        """Every event of the change set: its columns, sequence and whether it deletes."""
        # try_cast: a condition of another type (apply_as_deletes='op') reaches check_sql's
        # sentence instead of failing Spark's cast of its values
        deletes = f"coalesce(try_cast(({self.config.apply_as_deletes}) as boolean), false)"
        where = " where metadata_action = 'INSERT'" if self.has_action else ""
        truncates = (
            f", coalesce(try_cast(({self.config.apply_as_truncates}) as boolean), false) "
            f"as {TRUNCATE}"
            if self.truncates
            else ""
        )
        return (
            f"select *, ({self.config.sequence_by}) as {SEQ}, "
            f"{deletes if self.config.apply_as_deletes else 'false'} as {DELETE}{truncates} "
            f"from {source}{where}"
        )

    def cut(self, source: str, tombstones: str | None) -> str | None:
        """The newest truncate's sequence (a scalar subquery; NULL without one): the change
        set's, or one stored as a tombstone with NULL keys. None without apply_as_truncates."""
        if not self.truncates:
            return None
        parts = [f"select max({SEQ}) as _cdc_cut from ({self._truncate_events(source)})"]
        if tombstones is not None:
            parts.append(
                f"select max({quote(SEQUENCE_COLUMN)}) from {tombstones} "
                f"where {quote(self.key[0])} is null"
            )
        return "(select max(_cdc_cut) from (" + " union all ".join(parts) + "))"

    def _truncate_events(self, source: str) -> str:
        """The change set's truncates that are not bad events."""
        return f"select * from ({self.events(source)}) where {TRUNCATE} and not ({self._is_bad()})"

    def _after(self, sequence: str, cut: str | None) -> str:
        """`sequence` is newer than the cut (or there is none); an SQL condition."""
        return "true" if cut is None else f"coalesce({sequence} > {cut}, true)"

    def _valid(self, cut: str | None) -> str:
        """An event of a key that applies: not bad, no truncate, newer than the cut."""
        valid = f"not ({self._is_bad()})"
        if self.truncates:
            valid += f" and not {TRUNCATE}"
        return valid if cut is None else f"{valid} and {self._after(SEQ, cut)}"

    def check_sql(self, source: str) -> str:
        """One row: the events with a NULL key or sequence, one such key as text, the type
        apply_as_deletes has (NULL without events), and how many events delete."""
        example = (
            "to_json(named_struct("
            + ", ".join(f"'{key}', {quote(key)}" for key in self.key)
            + "))"
        )
        deletes = self.config.apply_as_deletes or "false"
        truncates = self.config.apply_as_truncates
        counted = f"count_if({TRUNCATE})" if truncates else "0"
        return (
            f"select count_if({self._is_bad()}) as bad, "
            f"max_by({example}, {self._is_bad()}) as example, "
            f"first(typeof(({deletes}))) as delete_type, count_if({DELETE}) as deletes, "
            f"first(typeof(({truncates or 'false'}))) as truncate_type, "
            f"{counted} as truncates from ({self.events(source)})"
        )

    def _unique(self, source: str, cut: str | None = None) -> str:
        """Events of one key and sequence once: a delete first, then the greatest row; none
        at or before the cut."""
        partition = column_list(self.key) + f", {SEQ}"
        row = "to_json(struct(" + column_list(self.columns) + "))"
        valid = self._valid(cut)
        return (
            f"select {column_list(self.columns)}, {SEQ}, {DELETE} from ("
            f"select *, row_number() over (partition by {partition} "
            f"order by {DELETE} desc, {row} desc) as _cdc_n "
            f"from ({self.events(source)}) where {valid}) where _cdc_n = 1"
        )

    def _rows(self, source: str, target: str | None, tombstones: str | None) -> str:
        """Each touched key's state (target row, tombstone) and its events newer than both,
        with `_cdc_kind`: 'row', 'tomb' or 'event'. A target row at or before the cut is no
        state: a truncate ended it."""
        cut = self.cut(source, tombstones)
        ctes = [f"_cdc_events as ({self._unique(source, cut)})"]
        keys = column_list(self.key)
        state = []
        if target is not None:
            state.append(
                f"select {column_list(self.columns)}, {quote(SEQUENCE_COLUMN)} as {SEQ}, "
                f"false as {DELETE}, 'row' as _cdc_kind from {target} "
                f"where ({keys}) in (select {keys} from _cdc_events) "
                f"and {self._after(quote(SEQUENCE_COLUMN), cut)}"
            )
        if tombstones is not None:
            state.append(
                f"select {self._null_values()}, max({quote(SEQUENCE_COLUMN)}) as "
                f"{SEQ}, true as {DELETE}, 'tomb' as _cdc_kind from {tombstones} "
                f"where ({keys}) in (select {keys} from _cdc_events) group by {keys}"
            )
        if not state:
            return ", ".join(ctes) + (
                ", _cdc_rows as (select *, 'event' as _cdc_kind from _cdc_events)"
            )
        ctes.append("_cdc_state as (" + " union all ".join(state) + ")")
        ctes.append(
            f"_cdc_since as (select {keys}, max({SEQ}) as _cdc_from from _cdc_state "
            f"group by {keys})"
        )
        on = self.key_match("e", "f")
        ctes.append(
            f"_cdc_rows as (select * from _cdc_state union all "
            f"select e.*, 'event' as _cdc_kind from _cdc_events e left join _cdc_since f "
            f"on {on} where f._cdc_from is null or e.{SEQ} > f._cdc_from)"
        )
        return ", ".join(ctes)

    def final_sql(self, source: str, target: str | None, tombstones: str | None) -> str:
        """Per touched key: its final columns, sequence, whether it is deleted, whether the
        target holds it, and whether anything changed."""
        order = f"struct({SEQ}, {DELETE})"
        last_delete = (
            f"max(case when {DELETE} then {SEQ} end) over (partition by {column_list(self.key)})"
        )
        columns = []
        for column in self.values:
            if self.config.ignore_null_updates:
                after = f"({SEQ} > _cdc_last_delete or _cdc_last_delete is null)"
                newer = f"{quote(column)} is not null and {after}"
                columns.append(
                    f"max_by({quote(column)}, {order}) filter (where {newer}) as {quote(column)}"
                )
            else:
                columns.append(f"max_by({quote(column)}, {order}) as {quote(column)}")
        return (
            f"with {self._rows(source, target, tombstones)} "
            f"select {column_list(self.key)}, {', '.join(columns) + ', ' if columns else ''}"
            f"max({SEQ}) as {SEQ}, max_by({DELETE}, {order}) as {DELETE}, "
            f"bool_or(_cdc_kind = 'row') as _cdc_in_target, "
            f"max_by(_cdc_kind, {order}) as _cdc_newest "
            f"from (select *, {last_delete} as _cdc_last_delete from _cdc_rows) "
            f"group by {column_list(self.key)}"
        )

    def first_sql(self, source: str) -> str:
        """The first build's rows: every key's final state that is not deleted."""
        written = column_list([*self.columns]) + f", {SEQ} as {quote(SEQUENCE_COLUMN)}"
        return f"select {written} from ({self.final_sql(source, None, None)}) where not {DELETE}"

    def tombstones_sql(self, source: str, tombstones: str, create: bool) -> str:
        """The change set's deletes as tombstones: the table created from them (a first
        build), or appended to it."""
        rows = (
            f"select {column_list(self.key)}, {SEQ} as {quote(SEQUENCE_COLUMN)}, "
            f"current_timestamp() as _cdc_deleted_at from ({self._unique(source)}) "
            f"where {DELETE}"
        )
        if self.truncates:  # each truncate: a tombstone of no key
            nulls = ", ".join(f"null as {quote(key)}" for key in self.key)
            rows += (
                f" union all select {nulls}, {SEQ}, current_timestamp() from "
                f"({self._truncate_events(source)})"
            )
        if create:
            return f"create or replace table {tombstones} using delta as {rows}"
        return f"insert into {tombstones} {rows}"

    def checked_tombstones_sql(self, source: str, tombstones: str) -> str:
        """The change set's deletes appended as tombstones by the statement that checks the
        events: a bad event, or an apply_as_deletes that is no condition, fails it (raise_error)
        before anything is written, and the adapter asks check_sql for the sentence. One pass
        over the change set where a check and an append were two; without truncates (whose
        count decides the MERGE) and unless bad events are skipped (which needs their count).
        A delete event landed twice leaves its tombstone twice, as a key's tombstones are only
        ever read as their newest sequence."""
        assert not self.truncates and self.config.on_bad_event == "fail"
        failed = f"raise_error('{CHECK_FAILED}')"
        checks = [f"when {self._is_bad()} then {failed}"]
        if self.config.apply_as_deletes:
            kind = f"typeof(({self.config.apply_as_deletes}))"
            checks.insert(0, f"when {kind} != 'boolean' then {failed}")
        return (
            f"insert into {tombstones} select {column_list(self.key)}, {SEQ} as "
            f"{quote(SEQUENCE_COLUMN)}, current_timestamp() as _cdc_deleted_at from "
            f"({self.events(source)}) where case {' '.join(checks)} else {DELETE} end"
        )

    def merge_sql(self, source: str, target: str, tombstones: str, truncated: bool = False) -> str:
        """The build's write: each touched key's newest state (`_composed_source` with
        ignore_null_updates; else `_newest_source`, which reads the target once) and, when the
        change set `truncated`, a delete of each target row the cut ended (`_with_cut_rows`)."""
        if self.config.ignore_null_updates:
            using, newer = self._composed_source(source, target, tombstones), None
            inserted = ""
        else:
            using = self._newest_source(source, tombstones)
            newer = f"s.{SEQ} > t.{quote(SEQUENCE_COLUMN)}"
            inserted = f" and not s.{DELETE}"
        cut = self.cut(source, tombstones)
        first = ""
        if truncated and cut is not None:
            using = self._with_cut_rows(using, target, cut)
            first = f"when matched and s.{CUT_ROW} then delete\n"
        when = f" and {newer}" if newer else ""
        written = column_list([*self.columns, SEQUENCE_COLUMN])
        return (
            f"merge into {target} as t\nusing ({using}) as s\non {self.key_match('t', 's')}"
            f"{'' if truncated else self.ranges}\n"
            f"{first}"
            f"when matched{when} and s.{DELETE} then delete\n"
            f"when matched{when} then update set {self._sets()}\n"
            f"when not matched{inserted} then insert ({written}) "
            f"values ({column_list(self.columns, 's.')}, s.{SEQ})"
        )

    def _newest_source(self, source: str, tombstones: str) -> str:
        """Without partial updates a key's newest event alone decides: the change set's newest
        event per key after the cut (ties as `_unique` breaks them), unless a tombstone of its
        key is newer (or as new and the event no delete); MERGEd where newer than the target's
        row. The tombstones are an anti join's broadcast side, read without a shuffle."""
        keys, row = column_list(self.key), "to_json(struct(" + column_list(self.columns) + "))"
        valid = self._valid(self.cut(source, tombstones))
        newest = (
            f"select *, row_number() over (partition by {keys} "
            f"order by {SEQ} desc, {DELETE} desc, {row} desc) as _cdc_n "
            f"from ({self.events(source)}) where {valid}"
        )
        tomb = f"d.{quote(SEQUENCE_COLUMN)}"  # a tombstone's sequence
        return (
            f"select {column_list(self.columns, 'e.')}, e.{SEQ}, e.{DELETE} from ({newest}) e "
            f"left anti join {tombstones} d on {self.key_match('e', 'd')} and ({tomb} > "
            f"e.{SEQ} or ({tomb} = e.{SEQ} and not e.{DELETE})) where e._cdc_n = 1"
        )

    def _composed_source(self, source: str, target: str, tombstones: str) -> str:
        """Keys whose newest state is an event, or a tombstone over a row the target still
        holds (a build that failed after its tombstones). A delete of a key the target does
        not hold is left out (no clause would match it)."""
        return (
            f"select {column_list(self.columns)}, {SEQ}, {DELETE} from ("
            f"{self.final_sql(source, target, tombstones)}) "
            f"where (_cdc_newest = 'event' or (_cdc_newest = 'tomb' and _cdc_in_target)) "
            f"and not ({DELETE} and not _cdc_in_target)"
        )

    def _with_cut_rows(self, using: str, target: str, cut: str) -> str:
        """`using`'s rows, and a delete of each target row at or before the cut that none of
        them writes (a truncate ended it)."""
        return (
            f"with _cdc_written as ({using}) select {column_list(self.columns)}, {SEQ}, "
            f"{DELETE}, false as {CUT_ROW} from _cdc_written union all "
            f"select {self._null_values('t.')}, "
            f"{cut} as {SEQ}, true as {DELETE}, true as {CUT_ROW} from {target} t left anti "
            f"join _cdc_written w on {self.key_match('t', 'w')} "
            f"where t.{quote(SEQUENCE_COLUMN)} <= {cut}"
        )


def purge_sql(tombstones: str, days: int) -> str:
    """Tombstones older than the retention go."""
    return (
        f"delete from {tombstones} where _cdc_deleted_at < "
        f"current_timestamp() - make_dt_interval({days})"
    )


def target_columns(columns: Sequence[str]) -> list[str]:
    """The target's columns: the kept event columns and the key's sequence."""
    return [*columns, SEQUENCE_COLUMN]
