"""Run dbt as a separate process, as a user does, to prove what persists between runs."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

DBT = str(Path(sys.executable).with_name("dbt"))


def dbt_command(
    project: Path, *args: str, name: str = "", env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Popen/run keyword arguments for `dbt <args>` in `project`, output as text on stdout.

    A `name` gives the process its own target and log folders, so processes running at once
    do not overwrite each other's artifacts.
    """
    own_dirs = ["--target-path", f"target_{name}", "--log-path", f"logs_{name}"] if name else []
    environment = {
        **os.environ,
        "DBT_PROFILES_DIR": str(project),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "0",
        **(env or {}),
    }
    return {
        "args": [DBT, *args, *own_dirs, "--project-dir", str(project)],
        "cwd": project,
        "env": environment,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
        "text": True,
    }


def run_dbt_process(
    project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """`dbt <args>` in `project` with its own profiles.yml; output captured as text."""
    command = dbt_command(project, *args, env=env)
    command.pop("stdout")
    command.pop("stderr")
    return subprocess.run(
        **command,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
