"""apply_cdc with scd_type 2: every version of a key, each with `__start_at` (the sequence of
the event that opened it) and `__end_at` (the sequence of the key's next event, an upsert or a
delete; NULL for the current version).

A build recomputes the versions of the keys its events touch from the events that made them:
each stored version is an upsert at its `__start_at`; a version's `__end_at` that no version
starts at, and each tombstone, is a delete there; the change set's events join them. One event
per key and sequence stays, the stored ones first (a new event with the sequence of a stored
one is a duplicate, or late against what the table says). Each upsert is then a version up to
the key's next event. So a late event lands inside the history: it closes the version before
it and ends at the one after it. The MERGE inserts the new versions and moves the ends that
changed; a stored version is never removed.
"""

from dbt.adapters.spark_streams.streams.cdc.config import SEQUENCE_COLUMN
from dbt.adapters.spark_streams.streams.cdc.scd1 import DELETE, SEQ, CdcQuery
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote

START, END = "__start_at", "__end_at"
STORED_END = "_cdc_end0"  # a stored version's end, beside its row in the ranked events


class Scd2Query(CdcQuery):
    """One model's apply_cdc of every version."""

    sequence_columns = (START, END)

    @property
    def target_sequence(self) -> str:
        return START

    def _ranked(
        self, source: str, target: str | None, tombstones: str | None
    ) -> tuple[list[str], list[str]]:
        """WITH-clauses `_cdc_events` (the change set's) and `_cdc_versions` (the touched keys'
        stored versions), and the ranked rows of every event they stand for: a stored version
        (rank 1) before an end or tombstone (2), a new delete (3), a new upsert (4)."""
        keys, columns = column_list(self.key), column_list(self.columns)
        ctes = [f"_cdc_events as ({self._unique(source)})"]
        ranked = [
            f"select {columns}, {SEQ}, {DELETE}, if({DELETE}, 3, 4) as _cdc_rank, "
            f"null as {STORED_END} from _cdc_events"
        ]
        if target is not None and tombstones is not None:
            touched = f"({keys}) in (select {keys} from _cdc_events)"
            ctes.append(
                f"_cdc_versions as (select * from {target} t where {touched}{self.ranges})"
            )
            ranked += [
                self._versions_ranked(),
                f"select {self._null_values()}, {quote(SEQUENCE_COLUMN)}, true, 2, null "
                f"from {tombstones} where {touched}",
            ]
        return ctes, ranked

    def _versions_ranked(self) -> str:
        """Each stored version as a version (rank 1, its stored end beside it) and, where it
        ended, a delete at its end (2): one read of the versions for both (Spark computes a
        WITH-clause again wherever it is named, and a MERGE's source reads its target)."""
        values = set(self.values)
        columns = ", ".join(
            f"if(_cdc_r = 1, {quote(c)}, null) as {quote(c)}" if c in values else quote(c)
            for c in self.columns
        )
        return (
            f"select {columns}, _cdc_s, _cdc_r = 2, _cdc_r, if(_cdc_r = 1, {END}, null) "
            f"from _cdc_versions lateral view inline(array(named_struct('s', {START}, 'r', 1), "
            f"named_struct('s', {END}, 'r', 2))) _cdc_v as _cdc_s, _cdc_r "
            "where _cdc_s is not null"
        )

    def _one_per_sequence(self, ranked: list[str]) -> list[str]:
        """WITH-clauses `_cdc_all` (the ranked rows) and `_cdc_one`: one row per key and
        sequence, the lowest rank's."""
        return [
            "_cdc_all as (" + " union all ".join(ranked) + ")",
            f"_cdc_one as (select * from (select *, row_number() over (partition by "
            f"{column_list(self.key)}, {SEQ} order by _cdc_rank) as _cdc_n from _cdc_all) "
            "where _cdc_n = 1)",
        ]

    def _chain(self, source: str, target: str | None, tombstones: str | None) -> str:
        """WITH-clauses ending in `_cdc_chain`: the touched keys' versions, recomputed."""
        keys, columns = column_list(self.key), column_list(self.columns)
        ctes, ranked = self._ranked(source, target, tombstones)
        ctes += self._one_per_sequence(ranked)
        ctes.append(
            f"_cdc_chain as (select {columns}, {SEQ} as {START}, lead({SEQ}) over (partition "
            f"by {keys} order by {SEQ}) as {END}, {DELETE}, _cdc_rank, {STORED_END} "
            "from _cdc_one)"
        )
        return "with " + ", ".join(ctes)

    def first_sql(self, source: str) -> str:
        """The first build's rows: every version the feed's events make."""
        return (
            f"{self._chain(source, None, None)} "
            f"select {column_list([*self.columns, START, END])} from _cdc_chain "
            f"where not {DELETE}"
        )

    def merge_sql(self, source: str, target: str, tombstones: str, truncated: bool = False) -> str:
        """The versions that are new, or whose end moved, MERGEd by key and start (a history
        has no truncates: its config refuses them)."""
        written = [*self.columns, START, END]
        on = self.key_match("t", "s", START)
        # a version is new where no stored one starts at its key and start (its row is not
        # a stored version's, rank 1), and moved where its end is not the stored one
        return (
            f"merge into {target} as t\nusing ({self._chain(source, target, tombstones)} "
            f"select {column_list(written)} from _cdc_chain where not {DELETE} and "
            f"(_cdc_rank != 1 or not ({END} <=> {STORED_END}))) as s\n"
            f"on {on}{self.ranges}\n"
            f"when matched then update set t.{END} = s.{END}\n"
            f"when not matched then insert ({column_list(written)}) "
            f"values ({column_list(written, 's.')})"
        )
