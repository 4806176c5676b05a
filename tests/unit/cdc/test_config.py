"""apply_cdc's config: checked before anything runs, each mistake one sentence."""

import pytest

from dbt.adapters.spark_streams.streams.builds.config import consumer_config
from dbt.adapters.spark_streams.streams.cdc.config import CdcConfig, envelope_sql
from dbt.adapters.spark_streams.streams.cdc.scd1 import CdcQuery
from dbt.adapters.spark_streams.streams.cdc.scd2 import Scd2Query
from dbt.adapters.spark_streams.streams.cdc.tracked import TrackedScd2Query
from dbt.adapters.spark_streams.streams.errors import StreamError


def config(**settings) -> CdcConfig:
    return CdcConfig.from_model_config("m", settings)


def test_defaults_and_a_full_config() -> None:
    assert config(sequence_by="ts") == CdcConfig(sequence_by="ts")
    full = config(
        sequence_by="struct(ts, lsn)",
        apply_as_deletes="op = 'D'",
        ignore_null_updates="true",
        cdc_except_columns="op",
        tombstone_retention_days="7",
        on_bad_event="skip",
    )
    assert full == CdcConfig(
        sequence_by="struct(ts, lsn)",
        apply_as_deletes="op = 'D'",
        ignore_null_updates=True,
        cdc_except_columns=("op",),
        tombstone_retention_days=7,
        on_bad_event="skip",
    )


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({}, "Model m: incremental_strategy 'apply_cdc' needs sequence_by"),
        ({"sequence_by": "ts", "scd_type": 3}, "Model m: scd_type 3 is not one of 1"),
        (
            {"sequence_by": "ts", "scd_type": 2, "ignore_null_updates": True},
            "ignore_null_updates is not supported with scd_type 2 yet",
        ),
        (
            {"sequence_by": "ts", "cdc_columns": ["a"], "cdc_except_columns": ["b"]},
            "Model m: set cdc_columns or cdc_except_columns, not both.",
        ),
        ({"sequence_by": "ts", "on_bad_event": "drop"}, "on_bad_event 'drop' is not one of"),
        ({"sequence_by": "ts", "ignore_null_updates": "yes"}, "ignore_null_updates must be"),
        ({"sequence_by": "ts", "tombstone_retention_days": "-1"}, "a whole number of days"),
        (
            {"sequence_by": "ts", "scd_type": 2, "apply_as_truncates": "op = 'T'"},
            r"apply_as_truncates applies to scd_type 1 only \(a truncate ends the current",
        ),
    ],
)
def test_mistakes_are_one_sentence(settings, said) -> None:
    with pytest.raises(StreamError, match=said):
        config(**settings)


def test_the_columns_the_target_keeps() -> None:
    columns = ["id", "name", "op", "ts", "metadata_action"]
    consumer = consumer_config(
        "m",
        {
            "incremental_strategy": "apply_cdc",
            "unique_key": "id",
            "sequence_by": "ts",
            "cdc_except_columns": ["op", "ts", "id"],  # the key stays whatever it says
        },
    )
    assert consumer.target_columns(columns) == ["id", "name"]
    named = consumer_config(
        "m",
        {"incremental_strategy": "apply_cdc", "unique_key": "id", "sequence_by": "ts",
         "cdc_columns": ["name"]},
    )  # fmt: skip
    assert named.target_columns(columns) == ["id", "name"]
    with pytest.raises(StreamError, match=r"cdc_columns names nope, not in the model's output"):
        consumer_config(
            "m",
            {"incremental_strategy": "apply_cdc", "unique_key": "id", "sequence_by": "ts",
             "cdc_columns": ["nope"]},
        ).target_columns(columns)  # fmt: skip
    with pytest.raises(StreamError, match="'apply_cdc' needs a unique_key"):
        consumer_config("m", {"incremental_strategy": "apply_cdc", "sequence_by": "ts"})


def test_an_enforced_contract_is_refused() -> None:
    with pytest.raises(StreamError, match="an enforced contract is not supported on apply_cdc"):
        config(sequence_by="ts", contract={"enforced": True})


def test_a_debezium_feed_deletes_on_op_d_and_keeps_no_envelope() -> None:
    debezium = config(sequence_by="ts_ms", cdc_format="debezium")
    assert debezium.apply_as_deletes == "op = 'd'"
    assert debezium.apply_as_truncates == "op = 't'"  # a table's truncate, with scd_type 1
    assert (
        config(sequence_by="ts_ms", cdc_format="debezium", scd_type=2).apply_as_truncates is None
    )
    columns = ["id", "name", "op", "ts_ms", "source", "metadata_action"]
    assert debezium.kept("m", columns[:5], ("id",)) == ["id", "name"]
    sql = envelope_sql("select * from landing;")
    assert "if(op = 'd', before, after) as _cdc_row" in sql and ";" not in sql
    with pytest.raises(StreamError, match="cdc_format 'avro' is not supported"):
        config(sequence_by="ts_ms", cdc_format="avro")


def test_a_target_another_type_built_is_refused_with_the_fix() -> None:
    current = CdcQuery(("id",), ("id", "name"), config(sequence_by="ts"), has_action=True)
    current.check_target("m", "shop.m", ["id", "name", "_cdc_sequence"])
    history = Scd2Query(("id",), ("id", "name"), config(sequence_by="ts", scd_type=2), True)
    with pytest.raises(StreamError) as raised:
        history.check_target("m", "shop.m", ["id", "name", "_cdc_sequence"])
    assert raised.value.msg == (
        "Model m: the target shop.m has no __start_at column, so it was not built by apply_cdc "
        "with scd_type 2. Rebuild it with --full-refresh."
    )


def test_without_truncates_no_cut_and_a_truncate_names_no_key() -> None:
    plain = CdcQuery(("id",), ("id", "n"), config(sequence_by="ts"), has_action=False)
    assert plain.cut("e", "tomb") is None
    assert "_cdc_truncate" not in plain.merge_sql("e", "t", "tomb", truncated=True)
    cut = CdcQuery(
        ("id",), ("id", "n"), config(sequence_by="ts", apply_as_truncates="op = 'T'"), False
    )
    assert "(not _cdc_truncate and (`id` is null))" in cut.check_sql("e")
    # the stored truncates are the tombstones of no key
    assert "from tomb where `id` is null" in cut.cut("e", "tomb")
    merged = cut.merge_sql("e", "t", "tomb", truncated=True)
    assert merged.index("when matched and s._cdc_cut_row then delete") < merged.index(
        "when matched and s._cdc_seq > t.`_cdc_sequence` and s._cdc_delete then delete"
    )
    assert "_cdc_cut_row" not in cut.merge_sql("e", "t", "tomb", truncated=False)


def test_tracked_history_columns() -> None:
    tracked = config(sequence_by="ts", scd_type=2, track_history_columns=["name"])
    assert tracked.tracks_history and tracked.tracked(["name", "email"]) == ["name"]
    excepted = config(sequence_by="ts", scd_type=2, track_history_except_columns="email")
    assert excepted.tracked(["name", "email", "n"]) == ["name", "n"]
    assert not config(sequence_by="ts", scd_type=2).tracks_history
    assert tracked.kept("m", ["id", "name", "email"], ("id",)) == ["id", "name", "email"]
    with pytest.raises(StreamError) as raised:
        tracked.kept("m", ["id", "email"], ("id",))
    assert raised.value.msg == (
        "Model m: track_history_columns names name, not a column the target keeps besides "
        "the key (email)."
    )
    with pytest.raises(StreamError, match="track_history_except_columns names id, not a"):
        excepted = config(sequence_by="ts", scd_type=2, track_history_except_columns="id")
        excepted.kept("m", ["id", "name"], ("id",))
    with pytest.raises(StreamError, match=r"apply to scd_type 2 \(which columns open a new"):
        config(sequence_by="ts", track_history_columns=["name"])
    with pytest.raises(StreamError, match="set track_history_columns or track_history_except"):
        config(
            sequence_by="ts", scd_type=2, track_history_columns="a",
            track_history_except_columns="b",
        )  # fmt: skip


def test_a_tracked_history_keeps_its_events_and_drops_merged_versions() -> None:
    tracked = TrackedScd2Query(
        ("id",), ("name", "id", "n"),
        config(sequence_by="ts", scd_type=2, track_history_columns="name"), False,
        events_table="s.m__cdc_events",
    )  # fmt: skip
    assert tracked.event_columns == ["id", "name", "n"]  # the key first: its statistics kept
    assert tracked.events_sql("e", create=True).startswith(
        "create or replace table s.m__cdc_events using delta "
        "tblproperties ('delta.enableTypeWidening' = 'true') as select `id`, `name`, `n`, "
    )
    assert tracked.events_sql("e", create=False).startswith(
        "merge with schema evolution into s.m__cdc_events"
    )
    merged = tracked.merge_sql("e", "s.m", "s.m__cdc_tombstones")
    assert "from s.m__cdc_events t where (`id`) in (select `id` from _cdc_events)" in merged
    assert "not (struct(o.`name`) <=> struct(o._cdc_prev.`name`))" in merged
    assert "when matched and s._cdc_drop then delete" in merged


def test_a_history_names_its_stored_versions_once_for_each_use() -> None:
    """Spark computes a WITH-clause again wherever it is named: a history's MERGE source
    reads the touched keys' stored versions once for their starts and ends (and a tracked
    history joins them once more, with its recomputed versions)."""
    plain = Scd2Query(("id",), ("id", "name"), config(sequence_by="ts", scd_type=2), False)
    merged = plain.merge_sql("e", "s.m", "s.m__cdc_tombstones")
    assert merged.count("_cdc_versions") == 2  # named, then read once
    assert "lateral view inline(array(named_struct('s', __start_at, 'r', 1)" in merged
    assert "(_cdc_rank != 1 or not (__end_at <=> _cdc_end0))" in merged
    tracked = TrackedScd2Query(
        ("id",), ("id", "name", "n"),
        config(sequence_by="ts", scd_type=2, track_history_columns="name"), False,
        events_table="s.m__cdc_events",
    )  # fmt: skip
    merged = tracked.merge_sql("e", "s.m", "s.m__cdc_tombstones")
    assert merged.count("_cdc_versions") == 3
    assert merged.count("_cdc_kept") == 2  # named, then joined once
    assert "from _cdc_kept c full join _cdc_versions v on" in merged
