"""dbt's and dbt-spark's settings of an incremental model, as a `stream_incremental` model
(or a materialized view) takes them, so that a model moved from `incremental` keeps its config
and none of it is silently dropped.

`merge_update_columns`, `merge_exclude_columns` and `incremental_predicates`: the `merge` and
`apply_changes` strategies write with one MERGE by the unique key, as dbt-spark's incremental
`merge` does, so they take these settings with dbt's meaning: a matched row updates only the
columns the first two leave (the others keep the target's value), and the predicates are added
to the MERGE's join, naming the target `DBT_INTERNAL_DEST` and the change set
`DBT_INTERNAL_SOURCE` as dbt documents. The other strategies write versions or events, where a
column left out of an update has no meaning; there the settings are refused rather than ignored.

`file_format`, `clustered_by` / `buckets`: a stream model's table is a Delta table (its write
and its streams' offsets are one Delta commit), and Delta has no Hive bucketing; another format
or bucketing is refused rather than ignored.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from sqlglot.dialects.spark import Spark
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.sql.catalog import as_key, unknown_columns

MERGING_STRATEGIES = ("merge", "apply_changes")
SETTINGS = ("merge_update_columns", "merge_exclude_columns", "incremental_predicates")
# dbt's names for the two sides of an incremental model's MERGE -> this project's aliases.
ALIASES = {"dbt_internal_dest": "t", "dbt_internal_source": "s"}


@dataclass(frozen=True)
class MergeSettings:
    """The columns a matched row updates and the predicates added to the MERGE's join."""

    model: str = ""
    update_columns: tuple[str, ...] = ()
    exclude_columns: tuple[str, ...] = ()
    predicates: tuple[str, ...] = ()

    @classmethod
    def from_model_config(cls, model: str, strategy: str, config: Any) -> "MergeSettings":
        values = {name: config.get(name) for name in SETTINGS}
        given = [name for name, value in values.items() if value]
        materialized_view = config.get("materialized") == "materialized_view"
        if given and (materialized_view or strategy not in MERGING_STRATEGIES):
            other = "a materialized view" if materialized_view else f"'{strategy}'"
            raise StreamError(
                f"Model {model}: {given[0]} applies to incremental_strategy 'merge' and "
                f"'apply_changes', not {other}; remove it from the model's config."
            )
        update, exclude = values["merge_update_columns"], values["merge_exclude_columns"]
        if update and exclude:
            raise StreamError(
                f"Model {model}: merge_update_columns and merge_exclude_columns cannot both be "
                "set; keep one of them."
            )
        return cls(
            model=model,
            update_columns=as_key(update),
            exclude_columns=as_key(exclude),
            predicates=tuple(
                _predicate(model, p) for p in _listed(values["incremental_predicates"])
            ),
        )

    @property
    def keeps_values(self) -> bool:
        """Whether the MERGE keeps some of the target's values (columns left out of updates,
        rows outside the predicates), which a rebuild from the rows would overwrite."""
        return bool(self.update_columns or self.exclude_columns or self.predicates)

    def update_set(self, columns: Sequence[str]) -> list[str]:
        """The written columns a matched row updates, in their order; a column the settings
        name that the model does not write is an error naming it."""
        named = self.update_columns or self.exclude_columns
        if not named:
            return list(columns)
        unknown = unknown_columns(named, columns)
        if unknown:
            setting = "merge_update_columns" if self.update_columns else "merge_exclude_columns"
            raise StreamError(
                f"Model {self.model}: {setting} names {', '.join(unknown)}, not a column the "
                f"model writes ({', '.join(columns)}); correct the name or remove it."
            )
        chosen = {c.lower() for c in named}
        keep = bool(self.update_columns)
        return [c for c in columns if (c.lower() in chosen) == keep]

    def join_predicates(self) -> str:
        """` and (p1) and (p2)` for the MERGE's ON clause, or ''."""
        return "".join(f" and ({p}\n)" for p in self.predicates)  # a `--` comment ends at \n


def _listed(value: Any) -> list[str]:
    if not value:
        return []
    return [value] if isinstance(value, str) else list(value)


def _predicate(model: str, predicate: Any) -> str:
    """The predicate with dbt's aliases of the MERGE's sides replaced by this project's, token
    by token (a string literal or a comment that spells them is left as it is)."""
    if not isinstance(predicate, str) or not predicate.strip():
        raise StreamError(
            f"Model {model}: incremental_predicates takes SQL conditions as strings, such as "
            '"DBT_INTERNAL_DEST.updated_at > date_sub(current_date(), 7)"; got '
            f"{predicate!r}."
        )
    try:
        tokens = Spark().tokenize(predicate)
    except TokenError as error:
        raise StreamError(
            f"Model {model}: incremental_predicates could not be read as SQL ({predicate!r}): "
            f"{error}."
        ) from error
    text, last = [], 0
    for token, following in pairwise(tokens):
        alias = ALIASES.get(token.text.lower())
        names = token.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        if alias and names and following.token_type == TokenType.DOT:
            text += [predicate[last : token.start], alias]  # a quoted name's span has its quotes
            last = token.end + 1
    return "".join(text) + predicate[last:]


def check_table_format(model: str, config: Any) -> None:
    """A file_format other than Delta, or Hive bucketing, is an error naming the fix."""
    file_format = config.get("file_format")
    if file_format is not None and str(file_format).lower() != "delta":
        raise StreamError(
            f"Model {model}: file_format '{file_format}' cannot hold this model's table, which "
            "is a Delta table: its write and its streams' offsets commit together in one Delta "
            "transaction. Remove file_format from the model's config, or set it to 'delta'."
        )
    if config.get("clustered_by") or config.get("buckets"):
        raise StreamError(
            f"Model {model}: clustered_by and buckets (Hive bucketing) are not available on "
            "Delta tables; remove them, or cluster the table with liquid_clustered_by."
        )
