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


def sources_yml(source: str, *tables: str) -> str:
    """A sources.yml with one source in the test's schema, for streams to read from."""
    listed = ", ".join(f"{{name: {table}}}" for table in tables)
    return (
        "version: 2\nsources:\n"
        f"  - name: {source}\n"
        '    schema: "{{ target.schema }}"\n'
        f"    tables: [{listed}]\n"
    )


class DeltaProject:
    """Base for test classes whose project builds models, seeds and snapshots on Delta."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return delta_project()
