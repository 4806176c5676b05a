"""The stream_fresh test's verdicts (freshness.py)."""

from datetime import datetime, timedelta

from dbt.adapters.spark_streams.streams.status.freshness import freshness_failures

NOW = datetime(2026, 11, 25, 12, 0, 0)


def stream(name: str, target: str = "`shop`.`mirror`", **status: object) -> dict:
    return {"name": name, "target_table": target, "stale": False, "stale_after": None, **status}


def test_stale_is_an_error_and_a_deadline_in_a_window_is_its_level() -> None:
    streams = [
        stream("stale", stale=True, stale_reason="its oldest unread change is gone"),
        stream("soon", stale_after=NOW + timedelta(hours=5)),
        stream("later", stale_after=NOW + timedelta(hours=30)),
        stream("caught_up"),
        stream("elsewhere", target="`shop`.`other`", stale=True),
    ]
    failures = freshness_failures(streams, "SHOP.mirror", 48, 6, NOW)
    assert [(f["stream"], f["level"]) for f in failures] == [
        ("stale", "error"),
        ("soon", "error"),
        ("later", "warn"),
    ]
    assert failures[0]["reason"] == "its oldest unread change is gone"
    assert (
        "goes stale at 2026-11-25 17:00:00 (in 5.0 hours, within error_after_hours: 6)"
        in (failures[1]["reason"])
    )


def test_without_windows_only_a_stale_stream_fails() -> None:
    streams = [stream("soon", stale_after=NOW + timedelta(minutes=1)), stream("s", stale=True)]
    assert [f["stream"] for f in freshness_failures(streams, "shop.mirror", None, None, NOW)] == [
        "s"
    ]


def test_a_deadline_exactly_at_the_window_fails_and_other_targets_are_skipped() -> None:
    streams = [
        stream("elsewhere", target="`shop`.`other`", stale=True),
        stream("edge", stale_after=NOW + timedelta(hours=6)),
        stream("unexplained", stale=True),
    ]
    failures = freshness_failures(streams, "`shop`.`mirror`", None, 6, NOW)
    assert [(f["stream"], f["level"]) for f in failures] == [
        ("edge", "error"),
        ("unexplained", "error"),
    ]
    assert failures[1]["reason"] == "the stream is stale"
    just_outside = [stream("s", stale_after=NOW + timedelta(hours=6, seconds=1))]
    assert freshness_failures(just_outside, "shop.mirror", None, 6, NOW) == []
