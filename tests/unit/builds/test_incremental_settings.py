"""dbt's merge settings on a stream model: the columns a matched row updates, the predicates
added to the MERGE's join with dbt's aliases replaced, and the refusals."""

import pytest

from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.builds.incremental_settings import MergeSettings
from dbt.adapters.spark_streams.streams.errors import StreamError

COLUMNS = ["id", "Status", "amount", "first_seen"]


def settings(strategy: str = "merge", **config: object) -> MergeSettings:
    return ConsumerConfig.from_model_config(
        "orders", {"unique_key": "id", "incremental_strategy": strategy, **config}
    ).merge


def test_without_settings_every_column_updates_and_nothing_joins() -> None:
    merge = settings()
    assert merge.update_set(COLUMNS) == COLUMNS
    assert merge.join_predicates() == ""


def test_exclude_and_update_columns_keep_the_written_order_and_case() -> None:
    assert settings(merge_exclude_columns=["FIRST_SEEN"]).update_set(COLUMNS) == [
        "id",
        "Status",
        "amount",
    ]
    assert settings("apply_changes", merge_update_columns="status").update_set(COLUMNS) == [
        "Status"
    ]
    # everything excluded: the MERGE has no update clause (the macros leave it out)
    excluded = settings(merge_exclude_columns=COLUMNS)
    assert excluded.update_set(COLUMNS) == []


def test_a_column_the_model_does_not_write() -> None:
    with pytest.raises(StreamError) as error:
        settings(merge_update_columns=["status", "nope"]).update_set(COLUMNS)
    assert error.value.msg == (
        "Model orders: merge_update_columns names nope, not a column the model writes "
        "(id, Status, amount, first_seen); correct the name or remove it."
    )


@pytest.mark.parametrize("strategy", ["append", "history", "apply_cdc"])
def test_refused_where_the_strategy_does_not_merge(strategy: str) -> None:
    config = {"sequence_by": "ts"} if strategy == "apply_cdc" else {}
    with pytest.raises(StreamError) as error:
        settings(strategy, incremental_predicates=["DBT_INTERNAL_DEST.ts > 0"], **config)
    assert error.value.msg == (
        "Model orders: incremental_predicates applies to incremental_strategy 'merge' and "
        f"'apply_changes', not '{strategy}'; remove it from the model's config."
    )


def test_both_column_settings_refused() -> None:
    with pytest.raises(StreamError, match="cannot both be set; keep one of them"):
        settings(merge_update_columns=["status"], merge_exclude_columns=["amount"])


def test_predicates_name_this_projects_aliases() -> None:
    merge = settings(
        incremental_predicates=[
            "DBT_INTERNAL_DEST.ts >= date_sub(current_date(), 7)",
            "`dbt_internal_dest`.`a b` = dbt_internal_source.x and 'DBT_INTERNAL_DEST.y' <> ''",
        ]
    )
    assert merge.join_predicates() == (
        " and (t.ts >= date_sub(current_date(), 7)\n)"
        " and (t.`a b` = s.x and 'DBT_INTERNAL_DEST.y' <> ''\n)"
    )
    # one predicate as a string; a trailing comment ends before the closing parenthesis
    assert settings(incremental_predicates="t.id > 0 -- recent").join_predicates() == (
        " and (t.id > 0 -- recent\n)"
    )
    # a column named like the alias, not followed by a dot, stays
    assert settings(incremental_predicates="dbt_internal_dest > 0").join_predicates() == (
        " and (dbt_internal_dest > 0\n)"
    )


@pytest.mark.parametrize("bad", [[""], [3], ["'unclosed"]])
def test_a_predicate_that_is_not_sql_text(bad: list) -> None:
    with pytest.raises(StreamError, match="Model orders: incremental_predicates"):
        settings(incremental_predicates=bad)


@pytest.mark.parametrize(
    ("config", "starts"),
    [
        ({"file_format": "parquet"}, "Model orders: file_format 'parquet' cannot hold"),
        ({"file_format": "iceberg"}, "Model orders: file_format 'iceberg' cannot hold"),
        ({"clustered_by": ["id"], "buckets": 4}, "Model orders: clustered_by and buckets"),
    ],
)
def test_a_table_that_is_not_delta_is_refused(config: dict, starts: str) -> None:
    with pytest.raises(StreamError) as error:
        settings(**config)
    assert error.value.msg.startswith(starts), error.value.msg


def test_delta_in_any_case_is_the_table_format() -> None:
    assert settings(file_format="DELTA").update_set(COLUMNS) == COLUMNS


def test_refused_on_a_materialized_view() -> None:
    with pytest.raises(StreamError) as error:
        settings(materialized="materialized_view", merge_exclude_columns=["n"])
    assert error.value.msg == (
        "Model orders: merge_exclude_columns applies to incremental_strategy 'merge' and "
        "'apply_changes', not a materialized view; remove it from the model's config."
    )
