"""A fixed `now` for the staleness check, for unit tests whose fake histories carry fixed
dates: on the real clock they started failing once those dates were older than Delta's
deleted-file retention (7 days), a week after they were written."""

from datetime import datetime

import pytest

from dbt.adapters.spark_streams.streams.delta import staleness


def freeze_staleness_clock(monkeypatch: pytest.MonkeyPatch, moment: datetime) -> None:
    """staleness.py's datetime.now() returns `moment` for the rest of the test."""

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[no-untyped-def, override]
            return moment

    monkeypatch.setattr(staleness, "datetime", Frozen)
