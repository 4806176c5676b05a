"""A model's stream settings, checked and defaulted in one place before anything runs.

dbt hands a model's config to the macros as loosely typed values (a string where a list was
meant, 'yes' for true). `stream()` and the `stream_incremental` materialization both call
`ConsumerConfig.from_model_config` through the adapter, so every check and default lives here
and the macros only render SQL from the result.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from dbt.adapters.spark_streams.streams.builds.incremental_settings import (
    MergeSettings,
    check_table_format,
)
from dbt.adapters.spark_streams.streams.cdc.config import CdcConfig
from dbt.adapters.spark_streams.streams.delta.change_size import DEFAULT_BROADCAST_CHANGE_ROWS
from dbt.adapters.spark_streams.streams.delta.retention import extension_days
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.records.netting import METADATA_COLUMNS
from dbt.adapters.spark_streams.streams.sql.catalog import as_key

STRATEGIES = ("append", "merge", "apply_changes", "history", "apply_cdc")
KEYED_STRATEGIES = ("merge", "apply_changes", "history", "apply_cdc")
ON_SCHEMA_CHANGE = ("ignore", "append_new_columns", "sync_all_columns", "fail")
DEFAULT_FILE_ROWS = 100_000
DEFAULT_EXTENSION_DAYS = 14
NO_LIMIT = {"file_rows": "no cap", "broadcast_change_rows": "no broadcast"}
# The stream columns an apply_changes MERGE reads; the target keeps none of them by default.
APPLY_CHANGES_NEEDS = ("metadata_action", "metadata_isupdate")
# The stream columns a history build reads to order a key's versions and date them.
HISTORY_NEEDS = ("metadata_action", "metadata_commit_version", "metadata_commit_timestamp")
# A stream target takes a small MERGE on every build, so it is created with deletion vectors:
# Delta then marks changed rows instead of copying every untouched row of the files they sit
# in; and with type widening, so that a column its source widens is widened in it too
# (streams/delta/type_widening.py). The model's own tblproperties win, e.g.
# {'delta.enableDeletionVectors': 'false'}.
DEFAULT_TARGET_PROPERTIES = {
    "delta.enableDeletionVectors": "true",
    "delta.enableTypeWidening": "true",
}
# A materialized view's table is created without deletion vectors: its refresh MERGEs the few
# changed groups of a table that is small beside its sources (a mart), whose files Delta
# rewrites faster than it writes and then reads their deletion vectors (measured in the
# performance journal). The model's own tblproperties win here too.
MATERIALIZED_VIEW_PROPERTIES = {"delta.enableDeletionVectors": "false"}
# A view stream's build may rebuild its target when that is cheaper (views/cost.py): 'auto'
# does, 'strict' fails instead. Views whose tables hold less than rebuild_min_bytes always
# build incrementally: either path is quick there.
INCREMENTAL = ("auto", "strict")
DEFAULT_REBUILD_MIN_BYTES = 32 * 2**20


class ModelConfig(Protocol):
    """What the macros pass: dbt's `config` (or any mapping with the same `get`)."""

    def get(self, name: str, default: Any = None) -> Any: ...


@dataclass(frozen=True)
class StreamSettings:
    """The settings every `stream()` call reads, a peek's included."""

    auto_enable_change_tracking: bool
    max_data_extension_days: int

    @classmethod
    def from_model_config(cls, model: str, config: ModelConfig) -> "StreamSettings":
        return cls(
            auto_enable_change_tracking=_flag(model, config, "auto_enable_change_tracking", True),
            max_data_extension_days=extension_days(
                config.get("max_data_extension_time", DEFAULT_EXTENSION_DAYS), model
            ),
        )


@dataclass(frozen=True)
class ConsumerConfig:
    """A `stream_incremental` model's settings, valid by construction."""

    model: str
    strategy: str
    unique_key: tuple[str, ...]
    on_schema_change: str
    file_rows: int
    keep_metadata_columns: bool
    streams: StreamSettings
    broadcast_change_rows: int = DEFAULT_BROADCAST_CHANGE_ROWS  # streams/delta/change_size.py
    key_ranges: bool | None = None  # streams/records/key_ranges.py; None: 'auto'
    target_properties: dict[str, str] = field(default_factory=dict)
    history: "HistoryColumns | None" = None  # the history strategy's period columns
    incremental: str = "auto"  # INCREMENTAL: may a view stream's build rebuild the target
    # liquid_clustered_by: the target's clustering columns (Delta liquid clustering)
    cluster_by: tuple[str, ...] = ()
    rebuild_min_bytes: int = DEFAULT_REBUILD_MIN_BYTES
    materialized_view: bool = False  # a materialized view's consumer (streams/mv/)
    recomputes_input: bool = False  # its refresh reads its whole input (views/cost.py)
    # group keys its recompute may read the input through: (input column, source column)
    recompute_keys: tuple[tuple[str, str], ...] = ()
    cdc: CdcConfig | None = None  # apply_cdc's settings (streams/cdc/)
    # dbt's merge_update_columns, merge_exclude_columns, incremental_predicates
    merge: MergeSettings = field(default_factory=MergeSettings)

    @classmethod
    def from_model_config(cls, model: str, config: ModelConfig) -> "ConsumerConfig":
        """The checked config; an unknown value is an error that names the fix, not a default."""
        strategy = config.get("incremental_strategy") or "apply_changes"
        if strategy not in STRATEGIES:
            raise StreamError(
                f"Model {model}: incremental_strategy '{strategy}' is not supported by "
                f"stream_incremental; use one of {', '.join(STRATEGIES)}."
            )
        unique_key = as_key(config.get("unique_key"))
        if strategy in KEYED_STRATEGIES and not unique_key:
            raise StreamError(
                f"Model {model}: incremental_strategy '{strategy}' needs a unique_key; add "
                "config(unique_key='...') or use incremental_strategy='append'."
            )
        check_table_format(model, config)
        on_schema_change = config.get("on_schema_change")
        if on_schema_change is not None and on_schema_change not in ON_SCHEMA_CHANGE:
            raise StreamError(
                f"Model {model}: on_schema_change '{on_schema_change}' is not one of "
                f"{', '.join(ON_SCHEMA_CHANGE)}."
            )
        return cls(
            model=model,
            strategy=strategy,
            unique_key=unique_key,
            on_schema_change=on_schema_change or "ignore",
            file_rows=_rows(model, "file_rows", config.get("file_rows", DEFAULT_FILE_ROWS)),
            keep_metadata_columns=_flag(model, config, "keep_metadata_columns", False),
            streams=StreamSettings.from_model_config(model, config),
            broadcast_change_rows=_rows(
                model,
                "broadcast_change_rows",
                config.get("broadcast_change_rows", DEFAULT_BROADCAST_CHANGE_ROWS),
            ),
            key_ranges=_key_ranges(model, config.get("key_ranges", "auto")),
            target_properties=_target_properties(model, config.get("tblproperties")),
            history=HistoryColumns.from_model_config(model, config)
            if strategy == "history"
            else None,
            incremental=_incremental(model, config.get("incremental", "auto")),
            cdc=CdcConfig.from_model_config(model, config) if strategy == "apply_cdc" else None,
            merge=MergeSettings.from_model_config(model, strategy, config),
            cluster_by=as_key(config.get("liquid_clustered_by")),
            rebuild_min_bytes=_bytes(
                model,
                "rebuild_min_bytes",
                config.get("rebuild_min_bytes", DEFAULT_REBUILD_MIN_BYTES),
            ),
        )

    @property
    def rebuilds_from_view(self) -> bool:
        """Whether a view stream's build may rebuild the target from the view's rows: a
        mirror's (unless dbt's merge settings keep some of its values), or a materialized
        view's (its query over the rows)."""
        mirror = self.strategy == "apply_changes" and not self.merge.keeps_values
        return mirror or self.materialized_view

    @property
    def keeps_history(self) -> bool:
        """The history strategy: the target keeps every version of a key, with its period."""
        return self.history is not None

    @property
    def history_columns(self) -> list[str]:
        """The period columns the history strategy adds to the target (none otherwise)."""
        return [self.history.valid_from, self.history.valid_to] if self.history else []

    @property
    def first_build_inserts_only(self) -> bool:
        """A mirror's first build keeps the stream's INSERT rows (its initial rows) only."""
        return self.strategy == "apply_changes"

    @property
    def first_build_order(self) -> tuple[str, ...]:
        """The columns a first build writes in order of: the clustering columns, or the key,
        when files are capped, so each file holds one range of them and a later MERGE
        rewrites few files (Delta's OSS writes cluster only on OPTIMIZE)."""
        return (self.cluster_by or self.unique_key) if self.file_rows > 0 else ()

    @property
    def ranges_cluster_column(self) -> str | None:
        """The column whose ranges a mirror's MERGE names besides its key's: the first
        clustering column, when the target is clustered by something else than its key. A
        mirror's change set holds the old image of every row it changes or deletes (the
        DELETE half), so the ranges of its values in the change set cover every target row
        the MERGE can match."""
        if not self.cluster_by or self.strategy != "apply_changes":
            return None
        first = self.cluster_by[0]
        return None if self.unique_key[:1] == (first,) else first

    def target_columns(self, output_columns: Sequence[str]) -> list[str]:
        """The model's output columns the target keeps: all of them, less the stream's
        metadata for apply_changes (unless keep_metadata_columns)."""
        lowered = [column.lower() for column in output_columns]
        for key in self.unique_key:
            if key.lower() not in lowered:
                raise StreamError(
                    f"Model {self.model}: unique_key column '{key}' is not in the model's output "
                    f"({', '.join(output_columns)}). Select it from the stream."
                )
        if self.cdc is not None:
            events = [c for c in output_columns if c.lower() not in METADATA_COLUMNS]
            return self.cdc.kept(self.model, events, self.unique_key)
        if self.strategy not in ("apply_changes", "history") or self.keep_metadata_columns:
            return list(output_columns)
        for needed in HISTORY_NEEDS if self.history else APPLY_CHANGES_NEEDS:
            if needed not in lowered:
                raise StreamError(
                    f"Model {self.model}: incremental_strategy '{self.strategy}' needs the "
                    f"stream's {needed} column in the model's output. Select it from the stream."
                )
        kept = [column for column in output_columns if column.lower() not in METADATA_COLUMNS]
        if self.history:
            self.history.check(self.model, kept)
        return kept

    def check_target(self, target: str, columns: Sequence[str]) -> None:
        """Before a write into an existing target: a history target has the period columns the
        config names (another strategy, or other names, built it otherwise)."""
        if self.history is None:
            return
        existing = [column.lower() for column in columns]
        if any(period.lower() not in existing for period in self.history_columns):
            raise StreamError(
                f"Model {self.model}: the target {target} has no {self.history.valid_from} / "
                f"{self.history.valid_to} columns, so it was not built by incremental_strategy "
                "'history' (or with other valid_from_column / valid_to_column names). Rebuild "
                "it with --full-refresh."
            )


def check_contract_columns(
    model: str, target_columns: Sequence[str], contract_columns: Sequence[str]
) -> None:
    """A stream model's enforced contract names the target's columns (the stream's metadata
    columns are not in an apply_changes target): any other column, or one missing, fails the
    build before anything is read or written."""
    target = [column.lower() for column in target_columns]
    contract = [column.lower() for column in contract_columns]
    missing = [column for column in target if column not in contract]
    extra = [column for column in contract if column not in target]
    if missing or extra:
        raise StreamError(
            f"Model {model}: its enforced contract must list the target's columns. "
            + (f"Not in the contract: {', '.join(missing)}. " if missing else "")
            + (f"Not in the target: {', '.join(extra)}. " if extra else "")
            + "Fix the model's columns in its YAML."
        )


@dataclass(frozen=True)
class HistoryColumns:
    """The history strategy's settings: the names of the period columns it adds to the
    target, and the columns whose change opens a new version (all of them when empty)."""

    valid_from: str = "valid_from"
    valid_to: str = "valid_to"
    track: tuple[str, ...] = ()

    @classmethod
    def from_model_config(cls, model: str, config: ModelConfig) -> "HistoryColumns":
        valid_from = _column_name(model, config, "valid_from_column", "valid_from")
        valid_to = _column_name(model, config, "valid_to_column", "valid_to")
        if valid_from.lower() == valid_to.lower():
            raise StreamError(
                f"Model {model}: valid_from_column and valid_to_column must differ (both are "
                f"'{valid_from}')."
            )
        return cls(valid_from, valid_to, as_key(config.get("history_track_columns")))

    def check(self, model: str, columns: Sequence[str]) -> None:
        """The period columns must be new to the model's output, the tracked ones in it."""
        lowered = [column.lower() for column in columns]
        for period in (self.valid_from, self.valid_to):
            if period.lower() in lowered:
                raise StreamError(
                    f"Model {model}: the history strategy adds the column '{period}', which the "
                    "model already selects. Rename it in the model, or set "
                    "valid_from_column / valid_to_column."
                )
        for column in self.track:
            if column.lower() not in lowered:
                raise StreamError(
                    f"Model {model}: history_track_columns names '{column}', which is not in the "
                    f"model's output ({', '.join(columns)})."
                )


def _target_properties(model: str, given: Any) -> dict[str, str]:
    """The table properties a first build creates the target with: ours, then the model's."""
    if given is not None and not isinstance(given, Mapping):
        raise StreamError(
            f"Model {model}: tblproperties must be a mapping of property names to values, like "
            f"{{'delta.enableDeletionVectors': 'false'}}, not {given!r}."
        )
    return {**DEFAULT_TARGET_PROPERTIES, **{str(k): str(v) for k, v in (given or {}).items()}}


def _column_name(model: str, config: ModelConfig, setting: str, default: str) -> str:
    value = config.get(setting) or default
    if not isinstance(value, str):
        raise StreamError(f"Model {model}: {setting} must be a column name, not {value!r}.")
    return value


def _flag(model: str, config: ModelConfig, name: str, default: bool) -> bool:
    value = config.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise StreamError(f"Model {model}: {name} must be true or false, not '{value}'.")
    return value


def _key_ranges(model: str, value: Any) -> bool | None:
    """true, false or 'auto' (None: by the target's size, key_ranges.py)."""
    if value == "auto":
        return None
    if not isinstance(value, bool):
        raise StreamError(
            f"Model {model}: key_ranges must be true, false or 'auto', not '{value}'."
        )
    return value


def _incremental(model: str, value: Any) -> str:
    """'auto' (a view stream's build may rebuild its target when cheaper) or 'strict'."""
    if value not in INCREMENTAL:
        raise StreamError(
            f"Model {model}: incremental must be 'auto' (rebuild a view stream's target when "
            f"that is cheaper) or 'strict' (fail instead), not '{value}'."
        )
    return str(value)


def _bytes(model: str, name: str, value: Any) -> int:
    """A size in bytes, a whole number of at least 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StreamError(f"Model {model}: {name} must be a whole number of bytes, not '{value}'.")
    return value


def _rows(model: str, name: str, value: Any) -> int:
    """A number of rows (file_rows: the most a file of the target holds; 0: as Spark writes
    them. broadcast_change_rows: see delta/change_size.py; 0: never)."""
    try:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        whole = number and value == int(value)
    except (ValueError, OverflowError):  # nan, inf
        whole = False
    if not whole or value < 0:
        raise StreamError(
            f"Model {model}: {name} must be a whole number of rows (0 for {NO_LIMIT[name]}), "
            f"not '{value}'."
        )
    return int(value)


class _MaterializedViewConfig:
    """A materialized view's config as its streams' consumer reads it: it writes what its
    refresh computes (the append strategy's settings, no key), whatever else it says."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    def get(self, name: str, default: Any = None) -> Any:
        if name in ("incremental_strategy", "unique_key", "keep_metadata_columns"):
            return {"incremental_strategy": "append"}.get(name, default)
        if name == "incremental":  # refresh: 'incremental' never takes the cheaper rebuild
            return "strict" if self.config.get("refresh") == "incremental" else "auto"
        given = self.config.get(name, default)
        if name == "tblproperties" and (given is None or isinstance(given, Mapping)):
            return {**MATERIALIZED_VIEW_PROPERTIES, **(given or {})}
        return given


def consumer_config(model: str, config: ModelConfig) -> ConsumerConfig:
    """The checked config of a model that consumes streams: a stream_incremental model, or a
    materialized view (streams/mv/), whose streams its materialization owns."""
    if config.get("materialized") == "materialized_view":
        parsed = ConsumerConfig.from_model_config(model, _MaterializedViewConfig(config))
        return replace(parsed, materialized_view=True)
    return ConsumerConfig.from_model_config(model, config)
