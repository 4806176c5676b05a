"""incremental_strategy 'apply_cdc': a feed of change events applied to a table of current state
(SCD type 1) or of every version (type 2). Its config, checked once
(docs/guides/change-feeds.md).

An event is a row of the model's output: its key columns (`unique_key`), a sequence
(`sequence_by`, a column or an expression, a struct for ties) and, where `apply_as_deletes`
says so, a delete; where `apply_as_truncates` says so (scd_type 1), a truncate of every key.
The target keeps the event's columns (all of them, `cdc_columns`, or all but
`cdc_except_columns`) and the key's sequence in `_cdc_sequence`; deletes leave tombstones in
`<model>__cdc_tombstones` for `tombstone_retention_days`. With scd_type 2,
`track_history_columns` (or `track_history_except_columns`) name the columns whose change opens
a version; the model's events are then kept in `<model>__cdc_events` (streams/cdc/tracked.py).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.catalog import as_key, unknown_columns

SEQUENCE_COLUMN = "_cdc_sequence"
TOMBSTONES_SUFFIX = "__cdc_tombstones"
EVENTS_SUFFIX = "__cdc_events"
DEFAULT_TOMBSTONE_DAYS = 2
ON_BAD_EVENT = ("fail", "skip")
# Debezium's envelope: the row before and after, the operation (c create, u update, d delete,
# r a snapshot's read), when, and where from. What the target does not keep of it:
DEBEZIUM_ENVELOPE = ("op", "ts_ms", "ts_us", "ts_ns", "source", "transaction")
DEBEZIUM_OPS = ("c", "u", "d", "r")
DEBEZIUM_DELETE = "op = 'd'"
DEBEZIUM_TRUNCATE = "op = 't'"  # a table's truncate (PostgreSQL, MySQL, Db2 connectors)


def envelope_sql(sql: str) -> str:
    """A Debezium feed's events as rows: the row after the change (before it, for a delete)
    as columns, beside the envelope's other fields."""
    body = sql.strip().rstrip(";")
    return (
        "select _cdc_row.*, * except (_cdc_row) from (select if(op = 'd', before, after) as "
        f"_cdc_row, * except (before, after) from ({body}))"
    )


@dataclass(frozen=True)
class CdcConfig:
    """The apply_cdc settings of one model, valid by construction."""

    sequence_by: str
    apply_as_deletes: str | None = None
    apply_as_truncates: str | None = None
    ignore_null_updates: bool = False
    cdc_columns: tuple[str, ...] = ()
    cdc_except_columns: tuple[str, ...] = ()
    tombstone_retention_days: int = DEFAULT_TOMBSTONE_DAYS
    on_bad_event: str = "fail"
    scd_type: int = 1
    cdc_format: str | None = None  # 'debezium': the envelope read (envelope_sql)
    track_history_columns: tuple[str, ...] = ()
    track_history_except_columns: tuple[str, ...] = ()

    @property
    def tracks_history(self) -> bool:
        """Only some columns open a version (scd_type 2): the events are kept."""
        return bool(self.track_history_columns or self.track_history_except_columns)

    @classmethod
    def from_model_config(cls, model: str, config: Any) -> "CdcConfig":
        sequence_by = config.get("sequence_by")
        if not sequence_by or not str(sequence_by).strip():
            raise StreamError(
                f"Model {model}: incremental_strategy 'apply_cdc' needs sequence_by, the column "
                "or expression that orders a key's events (for example sequence_by='updated_at', "
                "or 'struct(ts_ms, lsn)' to break ties)."
            )
        scd_type = _scd_type(model, config)
        columns, excepted = (
            as_key(config.get("cdc_columns")),
            as_key(config.get("cdc_except_columns")),
        )
        if columns and excepted:
            raise StreamError(f"Model {model}: set cdc_columns or cdc_except_columns, not both.")
        _no_contract(model, config)
        tracked, untracked = _tracked(model, config, scd_type)
        on_bad_event = str(config.get("on_bad_event", "fail"))
        if on_bad_event not in ON_BAD_EVENT:
            raise StreamError(
                f"Model {model}: on_bad_event '{on_bad_event}' is not one of fail, skip."
            )
        cdc_format = _format(model, config)
        deletes = config.get("apply_as_deletes") or (DEBEZIUM_DELETE if cdc_format else None)
        truncates = config.get("apply_as_truncates") or (
            DEBEZIUM_TRUNCATE if cdc_format and scd_type == 1 else None
        )
        return cls(
            sequence_by=str(sequence_by),
            apply_as_deletes=str(deletes) if deletes else None,
            apply_as_truncates=str(truncates) if truncates else None,
            ignore_null_updates=_flag(
                model, "ignore_null_updates", config.get("ignore_null_updates", False)
            ),
            cdc_columns=columns,
            cdc_except_columns=excepted,
            tombstone_retention_days=_days(
                model, config.get("tombstone_retention_days", DEFAULT_TOMBSTONE_DAYS)
            ),
            on_bad_event=on_bad_event,
            scd_type=scd_type,
            cdc_format=cdc_format,
            track_history_columns=tracked,
            track_history_except_columns=untracked,
        )

    def kept(self, model: str, columns: Sequence[str], unique_key: Sequence[str]) -> list[str]:
        """The event columns the target keeps (the key always), in the event's order."""
        missing = unknown_columns(self.cdc_columns or self.cdc_except_columns, columns)
        if missing:
            which = "cdc_columns" if self.cdc_columns else "cdc_except_columns"
            raise StreamError(
                f"Model {model}: {which} names {', '.join(missing)}, not in the model's output "
                f"({', '.join(columns)})."
            )
        keys = {key.lower() for key in unique_key}
        if self.cdc_columns:
            wanted = {name.lower() for name in self.cdc_columns} | keys
            kept = [column for column in columns if column.lower() in wanted]
        else:
            dropped = {name.lower() for name in self.cdc_except_columns} - keys
            if self.cdc_format:
                dropped |= set(DEBEZIUM_ENVELOPE) - keys
            kept = [column for column in columns if column.lower() not in dropped]
        self._check_tracked(model, [column for column in kept if column.lower() not in keys])
        return kept

    def _check_tracked(self, model: str, values: Sequence[str]) -> None:
        """track_history_columns (or _except_columns) name columns the target keeps, not the
        key's."""
        named = self.track_history_columns or self.track_history_except_columns
        missing = unknown_columns(named, values)
        if missing:
            which = (
                "track_history_columns"
                if self.track_history_columns
                else "track_history_except_columns"
            )
            raise StreamError(
                f"Model {model}: {which} names {', '.join(missing)}, not a column the target "
                f"keeps besides the key ({', '.join(values)})."
            )

    def tracked(self, values: Sequence[str]) -> list[str]:
        """Of the target's columns besides the key, those whose change opens a version."""
        if self.track_history_columns:
            named = {name.lower() for name in self.track_history_columns}
            return [column for column in values if column.lower() in named]
        excepted = {name.lower() for name in self.track_history_except_columns}
        return [column for column in values if column.lower() not in excepted]


def _scd_type(model: str, config: Any) -> int:
    scd_type = str(config.get("scd_type", 1))
    if scd_type not in ("1", "2"):
        raise StreamError(
            f"Model {model}: scd_type {scd_type} is not one of 1 (the current state) or 2 "
            "(every version, with __start_at and __end_at)."
        )
    if scd_type == "2" and str(config.get("ignore_null_updates", False)).lower() == "true":
        raise StreamError(
            f"Model {model}: ignore_null_updates is not supported with scd_type 2 yet; "
            "select full rows, or keep the current state (scd_type 1)."
        )
    if scd_type == "2" and config.get("apply_as_truncates"):
        raise StreamError(
            f"Model {model}: apply_as_truncates applies to scd_type 1 only (a truncate ends "
            "the current state; a history keeps every version). Remove it, or keep the "
            "current state (scd_type 1)."
        )
    return int(scd_type)


def _tracked(model: str, config: Any, scd_type: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    tracked = as_key(config.get("track_history_columns"))
    untracked = as_key(config.get("track_history_except_columns"))
    if tracked and untracked:
        raise StreamError(
            f"Model {model}: set track_history_columns or track_history_except_columns, not both."
        )
    if (tracked or untracked) and scd_type != 2:
        raise StreamError(
            f"Model {model}: track_history_columns and track_history_except_columns apply to "
            "scd_type 2 (which columns open a new version); the current state (scd_type 1) "
            "keeps no versions. Set scd_type=2, or remove them."
        )
    return tracked, untracked


def _no_contract(model: str, config: Any) -> None:
    contract = config.get("contract")
    if getattr(contract, "enforced", None) or (
        isinstance(contract, dict) and contract.get("enforced")
    ):
        raise StreamError(
            f"Model {model}: an enforced contract is not supported on apply_cdc yet. Remove "
            "contract: {enforced: true}, or test the columns with data tests."
        )


def _format(model: str, config: Any) -> str | None:
    cdc_format = config.get("cdc_format")
    if cdc_format not in (None, "", "debezium"):
        raise StreamError(
            f"Model {model}: cdc_format '{cdc_format}' is not supported; the one format read "
            "is 'debezium' (leave it unset for flat events)."
        )
    return cdc_format or None


def _flag(model: str, name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "false"):
        return str(value).lower() == "true"
    raise StreamError(f"Model {model}: {name} must be true or false, not {value!r}.")


def _days(model: str, value: Any) -> int:
    try:
        days = int(value)
    except (TypeError, ValueError):
        days = -1
    if days < 0:
        raise StreamError(
            f"Model {model}: tombstone_retention_days must be a whole number of days (0 or "
            f"more), not {value!r}."
        )
    return days
