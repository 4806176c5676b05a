"""dbt-spark needs `file_format: delta` spelled out; the suites below add it to each project."""

from typing import Any

import pytest

DELTA = {"+file_format": "delta"}


def delta_project(**config: Any) -> dict[str, Any]:
    """A project config with Delta for models, seeds and snapshots, merged with `config`."""
    merged: dict[str, Any] = {key: dict(DELTA) for key in ("models", "seeds", "snapshots")}
    for key, value in config.items():
        merged[key] = {**merged[key], **value} if key in merged else value
    return merged


class DeltaProject:
    """Base for test classes whose project builds models, seeds and snapshots on Delta."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return delta_project()
