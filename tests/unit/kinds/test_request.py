"""A stream() call's options parsed once, by the request type (no JVM): the defaults, the key
a consumer lends, the start point, the other consumers, and what is refused."""

import pytest

from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.request import StreamRequest
from dbt.adapters.spark_streams.streams.records.netting import VERSIONS

NODE = "model.shop.orders_mirror"
SOURCE = ("raw", "orders")


def parsed(consumer: ConsumerConfig | None = None, **options) -> StreamRequest:
    return StreamRequest.from_options(
        NODE, "orders_mirror", SOURCE, {"relation_label": "orders", **options}, consumer
    )


def test_the_defaults_of_a_bare_call() -> None:
    request = parsed()
    assert request == StreamRequest(
        name="orders_mirror__orders",
        schema="raw",
        identifier="orders",
        mode="standard",
        unique_key=(),
        show_initial_rows=True,
        start=None,
        start_at=False,
    )


def test_a_consumer_lends_its_unique_key_and_a_history_consumer_reads_every_version() -> None:
    mirror = ConsumerConfig.from_model_config("m", {"unique_key": ["id", "day"]})
    assert parsed(mirror).unique_key == ("id", "day")
    assert parsed(mirror, unique_key="sku").unique_key == ("sku",)
    history = ConsumerConfig.from_model_config(
        "m", {"incremental_strategy": "history", "unique_key": "id"}
    )
    assert parsed(history).every_version and parsed(history).rows_mode == VERSIONS
    assert parsed(history, mode="append_only").rows_mode == "append_only"
    assert not parsed(mirror).every_version
    # an apply_cdc model's key is its events': each event is a row of an unkeyed stream
    feed = ConsumerConfig.from_model_config(
        "m", {"incremental_strategy": "apply_cdc", "unique_key": "id", "sequence_by": "ts"}
    )
    assert parsed(feed).unique_key == ()
    assert parsed(feed, unique_key="event_id").unique_key == ("event_id",)


def test_a_start_point_and_which_side_of_it() -> None:
    at = parsed(at={"version": 3}, name="s", mode="append_only", show_initial_rows=False)
    assert (at.name, at.mode, at.show_initial_rows) == ("s", "append_only", False)
    assert (at.start, at.start_at) == ({"version": 3}, True)
    before = parsed(before={"timestamp": "2026-01-01"})
    assert (before.start, before.start_at) == ({"timestamp": "2026-01-01"}, False)


def test_other_models_naming_the_same_stream_are_its_other_consumers() -> None:
    declared = {NODE: ["s"], "model.shop.a": ["s", "t"], "model.shop.b": ["t"]}
    assert parsed(name="s", stream_consumers=declared).other_consumers == ("model.shop.a",)
    assert parsed(stream_consumers=declared).other_consumers == ()


def test_both_points_or_a_point_that_is_no_mapping_is_refused() -> None:
    with pytest.raises(StreamError, match="give at= or before=, not both"):
        parsed(at={"version": 1}, before={"version": 2})
    with pytest.raises(StreamError) as raised:
        parsed(at=3)
    assert raised.value.msg == (
        "Stream orders_mirror__orders: at/before must be a mapping like {'version': 3} or "
        "{'timestamp': '2024-01-01 00:00:00'}, not 3."
    )
