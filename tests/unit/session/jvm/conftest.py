"""The JVM's fixtures."""

from pathlib import Path

import pytest

from tests.unit.session.jvm.fakes import fake_jdk


@pytest.fixture
def jdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake JDK and Spark home, and an empty cache: every file the key reads, none real."""
    return fake_jdk(tmp_path, monkeypatch)
