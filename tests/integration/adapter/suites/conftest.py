"""dbt-tests-adapter's suites run unchanged: every project they write builds on Delta.

dbt-spark leaves `file_format` unset (Spark's default, Parquet); streams, snapshots and the
merge strategy need Delta. The suites each write their own `dbt_project.yml`, so Delta is added
there, under whatever the suite configures itself.
"""

from typing import Any

import pytest
import yaml
from dbt.tests.util import write_file

DELTA_KINDS = ("models", "seeds", "snapshots")


def with_delta(project_config: dict[str, Any]) -> dict[str, Any]:
    """`project_config` with `+file_format: delta` for each kind that does not set one."""
    merged = dict(project_config)
    for kind in DELTA_KINDS:
        configs = dict(merged.get(kind) or {})
        configs.setdefault("+file_format", "delta")
        merged[kind] = configs
    return merged


@pytest.fixture(scope="class")
def dbt_project_yml(project_root: Any, project_config_update: Any) -> dict[str, Any]:
    """dbt-tests-adapter's dbt_project.yml, with Delta as every kind's file format."""
    project_config: dict[str, Any] = {
        "name": "test",
        "profile": "test",
        "flags": {"send_anonymous_usage_stats": False},
    }
    if isinstance(project_config_update, str):
        project_config_update = yaml.safe_load(project_config_update)
    project_config.update(project_config_update or {})
    project_config = with_delta(project_config)
    write_file(yaml.safe_dump(project_config), project_root, "dbt_project.yml")
    return project_config
