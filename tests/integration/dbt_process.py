"""Run dbt as a separate process, as a user does, to prove what persists between runs."""

import os
import subprocess
import sys
from pathlib import Path

DBT = str(Path(sys.executable).with_name("dbt"))


def run_dbt_process(
    project: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`dbt <args>` in `project` with its own profiles.yml; output captured as text."""
    environment = {
        **os.environ,
        "DBT_PROFILES_DIR": str(project),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "0",
        **(env or {}),
    }
    return subprocess.run(
        [DBT, *args, "--project-dir", str(project)],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
