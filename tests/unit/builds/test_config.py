"""A model's stream config is checked and defaulted in Python, with the errors users see."""

import math

import pytest

from dbt.adapters.spark_streams.streams.builds.config import (
    ConsumerConfig,
    HistoryColumns,
    StreamSettings,
    check_contract_columns,
    consumer_config,
)
from dbt.adapters.spark_streams.streams.errors import StreamError


def parse(**config: object) -> ConsumerConfig:
    return ConsumerConfig.from_model_config("orders_mirror", {"unique_key": "id", **config})


def test_defaults() -> None:
    consumer = parse()
    assert consumer.strategy == "apply_changes"
    assert consumer.unique_key == ("id",)
    assert consumer.on_schema_change == "ignore"
    assert consumer.file_rows == 100_000
    assert consumer.broadcast_change_rows == 100_000
    assert consumer.key_ranges is None  # auto
    assert consumer.keep_metadata_columns is False
    assert consumer.streams == StreamSettings(
        auto_enable_change_tracking=True, max_data_extension_days=14
    )


def test_values_given() -> None:
    consumer = parse(
        incremental_strategy="append",
        unique_key=["a", "b"],
        on_schema_change="sync_all_columns",
        file_rows=3.0,
        broadcast_change_rows=0,
        key_ranges=True,
        keep_metadata_columns=True,
        auto_enable_change_tracking=False,
        max_data_extension_time=0,
    )
    assert (consumer.strategy, consumer.unique_key) == ("append", ("a", "b"))
    assert (consumer.on_schema_change, consumer.file_rows) == ("sync_all_columns", 3)
    assert consumer.broadcast_change_rows == 0
    assert consumer.key_ranges is True
    assert consumer.keep_metadata_columns is True
    assert consumer.streams == StreamSettings(False, 0)


@pytest.mark.parametrize(
    ("config", "error"),
    [
        (
            {"incremental_strategy": "upsert"},
            "Model orders_mirror: incremental_strategy 'upsert' is not supported by "
            "stream_incremental; use one of append, merge, apply_changes, history, apply_cdc.",
        ),
        (
            {"incremental_strategy": "merge", "unique_key": None},
            "Model orders_mirror: incremental_strategy 'merge' needs a unique_key; add "
            "config(unique_key='...') or use incremental_strategy='append'.",
        ),
        (
            {"unique_key": ""},
            "incremental_strategy 'apply_changes' needs a unique_key",
        ),
        (
            {"on_schema_change": "explode"},
            "Model orders_mirror: on_schema_change 'explode' is not one of ignore, "
            "append_new_columns, sync_all_columns, fail.",
        ),
        (
            {"keep_metadata_columns": "yes"},
            "Model orders_mirror: keep_metadata_columns must be true or false, not 'yes'.",
        ),
        (
            {"auto_enable_change_tracking": 1},
            "Model orders_mirror: auto_enable_change_tracking must be true or false, not '1'.",
        ),
        (
            {"incremental": "never"},
            "Model orders_mirror: incremental must be 'auto' (rebuild a view stream's target "
            "when that is cheaper) or 'strict' (fail instead), not 'never'.",
        ),
        (
            {"rebuild_min_bytes": -1},
            "Model orders_mirror: rebuild_min_bytes must be a whole number of bytes, not '-1'.",
        ),
        ({"rebuild_min_bytes": True}, "rebuild_min_bytes must be a whole number of bytes"),
        ({"rebuild_min_bytes": 1.5}, "rebuild_min_bytes must be a whole number of bytes"),
        ({"rebuild_min_bytes": "1GB"}, "rebuild_min_bytes must be a whole number of bytes"),
        (
            {"tblproperties": "delta.enableDeletionVectors=false"},
            "Model orders_mirror: tblproperties must be a mapping of property names to values, "
            "like {'delta.enableDeletionVectors': 'false'}, not "
            "'delta.enableDeletionVectors=false'.",
        ),
        (
            {"file_rows": "many"},
            "Model orders_mirror: file_rows must be a whole number of rows (0 for no cap), not "
            "'many'.",
        ),
        ({"file_rows": 2.5}, "file_rows must be a whole number of rows"),
        ({"file_rows": -1}, "file_rows must be a whole number of rows"),
        ({"file_rows": True}, "file_rows must be a whole number of rows"),
        ({"file_rows": math.nan}, "file_rows must be a whole number of rows"),
        ({"file_rows": math.inf}, "file_rows must be a whole number of rows"),
        (
            {"broadcast_change_rows": -5},
            "Model orders_mirror: broadcast_change_rows must be a whole number of rows (0 for no "
            "broadcast), not '-5'.",
        ),
        (
            {"key_ranges": "sometimes"},
            "Model orders_mirror: key_ranges must be true, false or 'auto', not 'sometimes'.",
        ),
        (
            {"max_data_extension_time": "2 weeks"},
            "Model orders_mirror: max_data_extension_time must be a whole number of days (0 "
            "turns the retention extension off), not '2 weeks'.",
        ),
    ],
)
def test_bad_values_name_the_model_and_the_fix(config: dict, error: str) -> None:
    with pytest.raises(StreamError) as raised:
        parse(**config)
    assert error in str(raised.value)


def test_a_peek_reads_only_the_stream_settings() -> None:
    """A peek (a table or test reading stream()) ignores consumer settings it does not use."""
    config = {"incremental_strategy": "upsert", "max_data_extension_time": 3}
    assert StreamSettings.from_model_config("peek", config) == StreamSettings(True, 3)


def test_target_columns_per_strategy() -> None:
    output = ["id", "name", "METADATA_ACTION", "metadata_isupdate", "metadata_row_id"]
    assert parse().target_columns(output) == ["id", "name"]
    assert parse(keep_metadata_columns=True).target_columns(output) == output
    assert parse(incremental_strategy="append").target_columns(output) == output


def test_target_columns_need_the_key_and_the_actions() -> None:
    with pytest.raises(StreamError, match="unique_key column 'id' is not in the model's output"):
        parse().target_columns(["name", "metadata_action", "metadata_isupdate"])
    with pytest.raises(StreamError, match="needs the stream's metadata_isupdate column"):
        parse().target_columns(["ID", "metadata_action"])


def test_target_properties_turn_deletion_vectors_and_type_widening_on_unless_told() -> None:
    assert parse().target_properties == {
        "delta.enableDeletionVectors": "true",
        "delta.enableTypeWidening": "true",
    }
    given = parse(tblproperties={"delta.enableDeletionVectors": False, "team": "shop"})
    assert given.target_properties == {
        "delta.enableDeletionVectors": "False",
        "delta.enableTypeWidening": "true",
        "team": "shop",
    }
    with pytest.raises(StreamError, match="tblproperties must be a mapping"):
        parse(tblproperties="delta.enableDeletionVectors=false")


def test_a_materialized_views_table_has_no_deletion_vectors_unless_told() -> None:
    view = {"materialized": "materialized_view"}
    assert consumer_config("mart", view).target_properties == {
        "delta.enableDeletionVectors": "false",
        "delta.enableTypeWidening": "true",
    }
    told = consumer_config("mart", {**view, "tblproperties": {"delta.enableDeletionVectors": 1}})
    assert told.target_properties["delta.enableDeletionVectors"] == "1"
    with pytest.raises(StreamError, match="Model mart: tblproperties must be a mapping"):
        consumer_config("mart", {**view, "tblproperties": "delta.enableDeletionVectors=true"})


def test_first_build_shape() -> None:
    assert parse().first_build_inserts_only and parse().first_build_order == ("id",)
    assert not parse(incremental_strategy="merge").first_build_inserts_only
    assert parse(file_rows=0).first_build_order == ()
    assert parse(incremental_strategy="append", unique_key=None).first_build_order == ()


HISTORY_OUTPUT = ["id", "name", "metadata_action", "metadata_commit_version"]


def test_history_defaults_and_target_columns() -> None:
    consumer = parse(incremental_strategy="history")
    assert consumer.keeps_history and not parse().keeps_history
    assert consumer.history == HistoryColumns("valid_from", "valid_to", ())
    output = [*HISTORY_OUTPUT, "metadata_commit_timestamp", "metadata_isupdate"]
    assert consumer.target_columns(output) == ["id", "name"]
    tracked = parse(
        incremental_strategy="history",
        history_track_columns="name",
        valid_from_column="since",
        valid_to_column="until",
    )
    assert tracked.history == HistoryColumns("since", "until", ("name",))


@pytest.mark.parametrize(
    ("config", "output", "error"),
    [
        (
            {"unique_key": None},
            HISTORY_OUTPUT,
            "Model orders_mirror: incremental_strategy 'history' needs a unique_key",
        ),
        (
            {},
            HISTORY_OUTPUT,
            "Model orders_mirror: incremental_strategy 'history' needs the stream's "
            "metadata_commit_timestamp column in the model's output. Select it from the stream.",
        ),
        (
            {"valid_to_column": "VALID_FROM"},
            HISTORY_OUTPUT,
            "Model orders_mirror: valid_from_column and valid_to_column must differ (both are "
            "'valid_from').",
        ),
        ({"valid_from_column": 3}, HISTORY_OUTPUT, "valid_from_column must be a column name"),
        (
            {"valid_from_column": "name"},
            [*HISTORY_OUTPUT, "metadata_commit_timestamp"],
            "Model orders_mirror: the history strategy adds the column 'name', which the model "
            "already selects. Rename it in the model, or set valid_from_column / valid_to_column.",
        ),
        (
            {"history_track_columns": ["city"]},
            [*HISTORY_OUTPUT, "metadata_commit_timestamp"],
            "Model orders_mirror: history_track_columns names 'city', which is not in the "
            "model's output (id, name).",
        ),
    ],
)
def test_history_errors_name_the_fix(config: dict, output: list, error: str) -> None:
    with pytest.raises(StreamError) as raised:
        parse(incremental_strategy="history", **config).target_columns(output)
    assert error in str(raised.value)


def test_a_history_target_needs_its_period_columns() -> None:
    history = ConsumerConfig.from_model_config(
        "h", {"incremental_strategy": "history", "unique_key": "id", "valid_to_column": "until"}
    )
    history.check_target("`shop`.`h`", ["ID", "VALID_FROM", "Until"])
    with pytest.raises(StreamError) as raised:
        history.check_target("`shop`.`h`", ["id", "valid_from", "valid_to"])
    assert raised.value.msg == (
        "Model h: the target `shop`.`h` has no valid_from / until columns, so it was not built "
        "by incremental_strategy 'history' (or with other valid_from_column / valid_to_column "
        "names). Rebuild it with --full-refresh."
    )
    mirror = ConsumerConfig.from_model_config("m", {"unique_key": "id"})
    mirror.check_target("`shop`.`m`", ["id"])


def test_an_enforced_contract_names_exactly_the_targets_columns() -> None:
    check_contract_columns("m", ["id", "Name"], ["ID", "name"])
    with pytest.raises(StreamError) as raised:
        check_contract_columns("m", ["id", "name", "fee"], ["id", "name", "metadata_action"])
    assert raised.value.msg == (
        "Model m: its enforced contract must list the target's columns. Not in the contract: "
        "fee. Not in the target: metadata_action. Fix the model's columns in its YAML."
    )


def test_view_stream_and_clustering_settings() -> None:
    consumer = parse()
    assert (consumer.incremental, consumer.cluster_by) == ("auto", ())
    assert consumer.rebuild_min_bytes == 32 * 2**20
    given = parse(incremental="strict", liquid_clustered_by=["region", "id"], rebuild_min_bytes=0)
    assert (given.incremental, given.cluster_by) == ("strict", ("region", "id"))
    assert given.rebuild_min_bytes == 0
    assert parse(rebuild_min_bytes=4096).rebuild_min_bytes == 4096


@pytest.mark.parametrize(
    ("setting", "value", "shown"),
    [("valid_from_column", 3, "3"), ("valid_to_column", ["a"], "['a']")],
)
def test_a_period_column_must_be_a_name(setting: str, value: object, shown: str) -> None:
    with pytest.raises(StreamError) as raised:
        parse(incremental_strategy="history", **{setting: value})
    assert (
        raised.value.msg == f"Model orders_mirror: {setting} must be a column name, not {shown}."
    )


def test_a_missing_key_lists_the_models_output() -> None:
    with pytest.raises(StreamError) as raised:
        parse().target_columns(["name", "metadata_action", "metadata_isupdate"])
    assert raised.value.msg == (
        "Model orders_mirror: unique_key column 'id' is not in the model's output (name, "
        "metadata_action, metadata_isupdate). Select it from the stream."
    )


def test_tracked_columns_are_found_whatever_their_case() -> None:
    tracked = parse(incremental_strategy="history", history_track_columns=["Name"])
    output = [*HISTORY_OUTPUT, "metadata_commit_timestamp"]
    assert tracked.target_columns(output) == ["id", "name"]


@pytest.mark.parametrize(
    ("contract", "said"),
    [
        (["id"], "Not in the contract: name, fee. "),
        (
            ["id", "name", "fee", "tax", "metadata_action"],
            "Not in the target: tax, metadata_action. ",
        ),
    ],
)
def test_a_contract_names_only_the_columns_that_differ(contract: list, said: str) -> None:
    with pytest.raises(StreamError) as raised:
        check_contract_columns("m", ["id", "name", "fee"], contract)
    assert raised.value.msg == (
        f"Model m: its enforced contract must list the target's columns. {said}"
        "Fix the model's columns in its YAML."
    )
