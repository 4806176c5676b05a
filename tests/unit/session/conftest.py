"""Fixtures of the session's unit tests."""

from pathlib import Path

import pytest

from dbt.adapters.spark_streams.session import embedded_confs


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A dbt project folder that relative profile paths resolve against, and an empty jar
    cache, whatever this machine's holds (tests/unit/session/jvm/test_jar_cache.py)."""
    monkeypatch.setattr(embedded_confs, "project_dir", lambda: tmp_path)
    monkeypatch.setenv("SPARK_STREAMS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path
