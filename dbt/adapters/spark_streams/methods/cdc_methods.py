"""The adapter's side of incremental_strategy 'apply_cdc' (streams/cdc/): the check of the
events, the tombstones, and the target's write."""

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.meta import AdapterMeta

from dbt.adapters.spark_streams.methods.stream_methods import logger
from dbt.adapters.spark_streams.streams.builds.build import write_confs
from dbt.adapters.spark_streams.streams.builds.change_reads import read_changes
from dbt.adapters.spark_streams.streams.cdc.config import (
    EVENTS_SUFFIX,
    SEQUENCE_COLUMN,
    TOMBSTONES_SUFFIX,
    envelope_sql,
)
from dbt.adapters.spark_streams.streams.cdc.scd1 import SEQ, CdcQuery, purge_sql
from dbt.adapters.spark_streams.streams.cdc.scd2 import Scd2Query
from dbt.adapters.spark_streams.streams.cdc.tombstones import (
    CLUSTERING_CONFS,
    COMPACTED_AT,
    COMPACTION_CONFS,
    PURGED_AT,
    cluster_column,
    compaction_due,
    compacts,
    purge_due,
)
from dbt.adapters.spark_streams.streams.cdc.tracked import TrackedScd2Query
from dbt.adapters.spark_streams.streams.delta.type_widening import (
    TYPE_WIDENING,
    type_changes,
    widen_target,
)
from dbt.adapters.spark_streams.streams.errors import SparkUnreachable, StreamError
from dbt.adapters.spark_streams.streams.offsets.registry import NO_CHECKSUM
from dbt.adapters.spark_streams.streams.records.key_ranges import can_range
from dbt.adapters.spark_streams.streams.sql.catalog import (
    column_names,
    column_types,
    table_properties,
)
from dbt.adapters.spark_streams.streams.sql.quoting import column_list, quote, quote_path


class ChangeFeedMethods(metaclass=AdapterMeta):
    """Mixed into the adapter (AdapterMeta collects its @available methods)."""

    run_rows: Any
    _run_with_confs: Any
    stream_consumer: Any
    stream_key_ranges: Any
    get_relation: Any
    _node: Any

    @available
    def cdc_events_sql(self, node_id: str, model_name: str, config: Any, sql: str) -> str:
        """The model's events: its query, or a Debezium envelope's rows (cdc_format)."""
        consumer = self.stream_consumer(node_id, model_name, config)
        if consumer.cdc is None or not consumer.cdc.cdc_format:
            return sql
        return envelope_sql(sql)

    @available
    def apply_cdc_first_sql(
        self, node_id: str, model_name: str, config: Any, sql: str, target: BaseRelation,
        columns: list[str],
    ) -> str:  # fmt: skip
        """The first build: the tombstones table created from the events' deletes (and the
        events table from its events, where history is tracked), and the SQL of the target's
        rows (each key's final state, or every version, that is not deleted)."""
        source = f"({sql})"
        query = self._cdc_query(
            node_id, model_name, config, columns, f"describe query {sql}", target
        )
        self._check_events(model_name, query, source, None)
        self.run_rows(query.tombstones_sql(source, self._tombstones(target), create=True))
        if isinstance(query, TrackedScd2Query):
            self.run_rows(query.events_sql(source, create=True))
        return query.first_sql(source)

    @available
    def apply_cdc_sql(
        self, node_id: str, model_name: str, config: Any, changes: BaseRelation,
        target: BaseRelation, columns: list[str],
    ) -> str:  # fmt: skip
        """A build with changes: the events checked, old tombstones purged and the change
        set's deletes appended to them (one statement, unless truncates or skipped bad events
        need counting first); returns the target's MERGE (the build's commit)."""
        source, build = str(changes), self._node(node_id).build
        described = build.change_columns if build is not None else ()
        query = self._cdc_query(
            node_id, model_name, config, columns, described or f"describe {source}", target
        )
        if build is not None and build.target_columns:  # as described before the write
            query.check_target(model_name, str(target), build.target_columns)
        tombstones = self._tombstones(target)
        self._create_aside(  # (a target that dbt clone copied has none: they start empty)
            target, TOMBSTONES_SUFFIX, f"{column_list(query.key)}, {query.target_sequence} as "
            "_cdc_sequence, current_timestamp() as _cdc_deleted_at",
        )  # fmt: skip
        if build is not None and (build.schema_reads.confs or build.widened):
            self._follow_event_types(model_name, query, source, str(target), tombstones, build)
        if query.truncates or query.config.on_bad_event == "skip":
            truncated = self._checked_then_tombstones(model_name, query, source, tombstones, build)
        else:
            self._tombstones_checked(model_name, query, source, tombstones, build)
            truncated = False
        if isinstance(query, TrackedScd2Query):
            file_rows = self.stream_consumer(node_id, model_name, config).file_rows
            self._keep_events(query, target, source, file_rows, build)
        if not truncated:  # (a truncate's cut reaches target rows outside the change's keys)
            query = replace(
                query, ranges=self._key_ranges(node_id, model_name, config, changes, target)
            )
        return query.merge_sql(source, str(target), tombstones, truncated=truncated)

    def _follow_event_types(
        self, model: str, query: CdcQuery, source: str, target: str, tombstones: str, build: Any
    ) -> None:
        """Where the build reads across a schema change of the events (or widened the
        target's columns): the tombstones' key and sequence, and the target's sequence
        columns, widened as the events' types were (delta/type_widening.py), before anything
        is written into them. The tombstones are the adapter's: their type widening is turned
        on first. (The kept events follow by their append's schema evolution.)"""
        events = f"describe query select * from ({query.events(source)})"
        described = self._read_changes(build, events)
        types = dict(zip(column_names(described), column_types(described), strict=True))
        wanted = {key: types[key] for key in query.key if key in types}
        for table, columns in (
            (tombstones, {**wanted, SEQUENCE_COLUMN: types[SEQ]}),
            (target, dict.fromkeys(query.sequence_columns, types[SEQ])),
        ):
            found = self.run_rows(f"describe {table}")
            changes = type_changes(
                columns, columns, dict(zip(column_names(found), column_types(found), strict=True))
            )
            if changes and table == tombstones:
                self.run_rows(
                    f"alter table {table} set tblproperties ('{TYPE_WIDENING}' = 'true')"
                )
            plan = widen_target(self.run_rows, model, table, changes, "append_new_columns")
            for change in plan.apply:
                logger.info(f"{model}: widened {table}'s {change}")

    def _key_ranges(
        self, node_id: str, model_name: str, config: Any, changes: BaseRelation,
        target: BaseRelation,
    ) -> str:  # fmt: skip
        """` and (t.key between low and high or ...)`: the change set's key ranges, which the
        build's reads of the target (and of the kept events) name so that Delta skips the
        files outside them, as apply_changes' MERGE does (streams/records/key_ranges.py)."""
        consumer = self.stream_consumer(node_id, model_name, config)
        return str(self.stream_key_ranges(
            changes, target, list(consumer.unique_key), consumer, node_id
        ))  # fmt: skip

    def _tombstones_checked(
        self, model_name: str, query: CdcQuery, source: str, tombstones: str, build: Any
    ) -> None:
        """The change set's deletes appended to the tombstones by the statement that checks
        the events (a build with none adds no commit: Delta records no empty append). When it
        fails, check_sql says why in a sentence; an error it does not explain is raised."""
        days = query.config.tombstone_retention_days
        purged = self._purge_when_due(tombstones, days)
        try:
            appended = query.checked_tombstones_sql(source, tombstones)
            self._read_changes(build, appended, NO_CHECKSUM)
        except (SparkUnreachable, StreamError):
            raise
        except Exception:
            self._check_events(model_name, query, source, build)
            raise
        self._compact_when_purged(tombstones, purged, days)

    def _checked_then_tombstones(
        self, model_name: str, query: CdcQuery, source: str, tombstones: str, build: Any
    ) -> bool:
        """The events checked (their truncates counted, bad ones counted to be skipped), then
        the deletes and truncates appended to the tombstones; whether the change set truncated."""
        skipped, deletes, truncates = self._check_events(model_name, query, source, build)
        if skipped and build is not None:
            build.notes = (*build.notes, f"skipped {skipped} bad event(s)")
        if deletes or truncates:  # (a build with neither adds no commit to the tombstones)
            days = query.config.tombstone_retention_days
            purged = self._purge_when_due(tombstones, days)
            appended = query.tombstones_sql(source, tombstones, False)
            self._read_changes(build, appended, NO_CHECKSUM)
            self._compact_when_purged(tombstones, purged, days)
        return bool(truncates)

    def _cdc_query(
        self,
        node_id: str,
        model_name: str,
        config: Any,
        columns: list[str],
        events: tuple[str, ...] | str,
        target: BaseRelation,
    ) -> CdcQuery:
        """The model's apply_cdc; `events`: the events' columns, or a DESCRIBE for them."""
        consumer = self.stream_consumer(node_id, model_name, config)
        cdc = consumer.cdc
        assert cdc is not None
        names = column_names(self.run_rows(events)) if isinstance(events, str) else events
        has_action = "metadata_action" in [name.lower() for name in names]
        key, kept = consumer.unique_key, tuple(columns)
        if cdc.tracks_history:
            return TrackedScd2Query(
                key=key, columns=kept, config=cdc, has_action=has_action,
                events_table=self._aside(target, EVENTS_SUFFIX),
            )  # fmt: skip
        kind = Scd2Query if cdc.scd_type == 2 else CdcQuery
        return kind(key=key, columns=kept, config=cdc, has_action=has_action)

    def _keep_events(
        self,
        query: TrackedScd2Query,
        target: BaseRelation,
        source: str,
        file_rows: int,
        build: Any,
    ) -> None:
        """The change set's events appended to the kept ones (a target that dbt clone copied
        has none: they start empty, and its stored versions stand for its events), then
        compacted when due (tombstones.py: at most hourly). The append evolves their schema
        as the events' does: new columns added, and, with type widening on (a table of an
        earlier version gains it here), a column its source widened widened."""
        self._create_aside(
            target, EVENTS_SUFFIX, f"{column_list(query.event_columns)}, "
            f"{query.target_sequence} as _cdc_sequence, false as _cdc_delete",
        )  # fmt: skip
        events = query.events_table
        properties = table_properties(self.run_rows, events)
        if str(properties.get(TYPE_WIDENING, "")).lower() != "true":  # (an earlier version's)
            self.run_rows(f"alter table {events} set tblproperties ('{TYPE_WIDENING}' = 'true')")
        self._read_changes(build, query.events_sql(source, create=False), NO_CHECKSUM)
        now = datetime.now(UTC)
        if compaction_due(properties.get(COMPACTED_AT), now):
            confs = dict(COMPACTION_CONFS)
            if self._clustered(events, query.key):  # in key order, files of file_rows
                confs |= CLUSTERING_CONFS | write_confs(file_rows)
            self._run_with_confs()(f"optimize {events}", confs)
            self._stamp(events, COMPACTED_AT, now)

    def _clustered(self, events: str, key: tuple[str, ...]) -> bool:
        """Whether the kept events are clustered by their first key column: they are, or
        they are now (a table of an earlier version, or created by a first build; the
        column an integer: tombstones.py). A table Delta cannot cluster stays as it is."""
        [detail] = self.run_rows(f"describe detail {events}")
        if _listed(detail.get("clusteringColumns")):
            return True
        described = self.run_rows(f"describe {events}")
        names, types = column_names(described), column_types(described)
        column = cluster_column(key, names, types, can_range)
        if column is None:
            return False
        try:
            self.run_rows(f"alter table {events} cluster by ({quote(column)})")
        except SparkUnreachable:
            raise
        except Exception as error:  # (a layout, not the events: they are kept either way)
            logger.warning(f"The kept events {events} stay unclustered: {error}")
            return False
        return True

    def _purge_when_due(self, tombstones: str, days: int) -> bool:
        """Tombstones past the retention purged when a purge is due (streams/cdc/tombstones.py:
        the last one, the table's PURGED_AT, an hour ago): a purge that finds nothing still
        scans the table, and most builds would find nothing. A build that fails after the
        DELETE purges again next time, which deletes nothing more. Whether it purged."""
        now = datetime.now(UTC)
        if not purge_due(table_properties(self.run_rows, tombstones).get(PURGED_AT), now, days):
            return False
        self.run_rows(purge_sql(tombstones, days))
        self._stamp(tombstones, PURGED_AT, now)
        return True

    def _stamp(self, table: str, key: str, now: datetime) -> None:
        """The time of a purge or compaction, kept in the table's property `key`."""
        self.run_rows(f"alter table {table} set tblproperties ('{key}' = '{now.isoformat()}')")

    def _compact_when_purged(self, tombstones: str, purged: bool, days: int) -> None:
        """The tombstones' small files rewritten into one by the build that purged them, after
        its append (tombstones.py: at most hourly; a table of one file is left as it is)."""
        if compacts(purged, days):
            self.run_rows(f"optimize {tombstones}")

    def _create_aside(self, target: BaseRelation, suffix: str, columns: str) -> None:
        """The table beside the target, empty with `columns` (select items over the target),
        where dbt's cache of the schema (no statement) does not hold it."""
        held = self.get_relation(target.database, target.schema, str(target.identifier) + suffix)
        if held is None:
            self.run_rows(
                f"create table if not exists {self._aside(target, suffix)} using delta as "
                f"select {columns} from {target} where false"
            )

    def _check_events(
        self, model: str, query: CdcQuery, source: str, build: Any
    ) -> tuple[int, int, int]:
        """A NULL key or sequence fails the build (or, with on_bad_event 'skip', is left out);
        apply_as_deletes must be a condition. The events skipped, those that delete and those
        that truncate."""
        [row] = self._read_changes(build, query.check_sql(source))
        for name, condition, typed, op in (
            ("apply_as_deletes", query.config.apply_as_deletes, "delete_type", "D"),
            ("apply_as_truncates", query.config.apply_as_truncates, "truncate_type", "T"),
        ):
            kind = row.get(typed)
            if condition and kind is not None and kind != "boolean":
                raise StreamError(
                    f"Model {model}: {name} ({condition}) is a {kind}, not a condition. Write "
                    f"a comparison, for example {name}=\"op = '{op}'\"."
                )
        bad, deletes = int(row.get("bad") or 0), int(row.get("deletes") or 0)
        truncates = int(row.get("truncates") or 0)
        if not bad:
            return 0, deletes, truncates
        known = ", ".join(query.known_ops)
        ops = f", or an op other than {known}" if query.config.cdc_format else ""
        said = (
            f"Model {model}: {bad} event(s) have a NULL key ({', '.join(query.key)}) or a NULL "
            f"sequence ({query.config.sequence_by}){ops}, for example {row.get('example')}"
        )
        if query.config.on_bad_event == "skip":
            logger.warning(f"{said}; skipped, as on_bad_event is 'skip'.")
            return bad, deletes, truncates
        raise StreamError(
            f"{said}. Nothing was written and no offset moved. Fix the events at their source, "
            "or set on_bad_event='skip' to leave such events out."
        )

    def _read_changes(self, build: Any, sql: str, confs: dict | None = None) -> list:
        """A statement reading the build's change set, with its write's schema confs
        (streams/builds/change_reads.py)."""
        return read_changes(self.run_rows, self._run_with_confs(), build, sql, confs)

    @staticmethod
    def _tombstones(target: BaseRelation) -> str:
        return ChangeFeedMethods._aside(target, TOMBSTONES_SUFFIX)

    @staticmethod
    def _aside(target: BaseRelation, suffix: str) -> str:
        """A table kept beside the target: its name and the suffix."""
        return quote_path(str(target.schema), str(target.identifier) + suffix)


def _listed(value: object) -> bool:
    """Whether DESCRIBE DETAIL's list (a list, or its text over a Thrift server) has items."""
    if isinstance(value, str):
        return bool(value.strip().strip("[]").strip())
    return bool(value)
