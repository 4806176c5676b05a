"""A pytest plugin that measures each test module: wall seconds on its worker, CPU-seconds of
the worker's process tree (its Python, its JVM, the dbt processes and servers it started),
Spark statements sent through the adapter's cursor (in the worker and in the dbt processes it
started) and dbt invocations (in-process and as separate processes).

CPU is counted by tests/measure/cpu.py. `pytest -p tests.measure.plugin --measure DIR`: each
worker writes its figures to DIR, and the process that ran the session writes DIR/measure.md
and prints it.
"""

import json
import os
import subprocess
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from tests.measure import counting
from tests.measure.cpu import TreeCpu
from tests.measure.table import module_rows, render, render_kinds

SITE = Path(__file__).resolve().parent / "site"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--measure", default="", help="measure each module into this folder")


class Measure:
    """One process's figures, per test node id."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.tests: dict[str, dict[str, float]] = {}
        self.current = ""
        self.cpu: TreeCpu | None = None

    def figure(self, name: str, amount: float = 1) -> None:
        entry = self.tests.setdefault(self.current, {})
        entry[name] = entry.get(name, 0) + amount

    def install(self) -> None:
        """Count statements, in-process dbt invocations and dbt processes from here on."""
        counting.install()
        self.cpu = TreeCpu()
        from dbt.cli.main import dbtRunner

        invoke = dbtRunner.invoke
        measure = self

        def counted_invoke(runner: Any, args: list[str], **kwargs: Any) -> Any:
            measure.figure("dbt")
            return invoke(runner, args, **kwargs)

        dbtRunner.invoke = counted_invoke  # type: ignore[method-assign]
        popen_init = subprocess.Popen.__init__

        def counted_popen(process: Any, args: Any, *rest: Any, **kwargs: Any) -> None:
            first = args[0] if isinstance(args, list | tuple) and args else str(args)
            if os.path.basename(str(first)) == "dbt":
                measure.figure("dbt")
            popen_init(process, args, *rest, **kwargs)

        subprocess.Popen.__init__ = counted_popen  # type: ignore[method-assign]


MEASURE: Measure | None = None


def pytest_configure(config: pytest.Config) -> None:
    global MEASURE
    option = config.getoption("--measure")
    if not option:
        return
    folder = Path(option).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    os.environ[counting.DIR_ENV] = str(folder)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(SITE), os.environ.get("PYTHONPATH", "")) if part
    )
    MEASURE = Measure(folder)
    if not hasattr(config, "workerinput") and config.getoption("numprocesses", None):
        return  # an xdist controller: the workers run the tests
    MEASURE.install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    if MEASURE is None or MEASURE.cpu is None:
        yield
        return
    MEASURE.current = item.nodeid
    os.environ[counting.TEST_ENV] = item.nodeid
    cpu, wall = MEASURE.cpu.total(), time.monotonic()
    yield
    MEASURE.figure("wall", time.monotonic() - wall)
    MEASURE.figure("cpu", MEASURE.cpu.total() - cpu)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if MEASURE is None:
        return
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
    if MEASURE.tests:
        (MEASURE.folder / f"tests-{worker}.json").write_text(json.dumps(MEASURE.tests))
    if hasattr(session.config, "workerinput"):
        return
    tests: dict[str, dict[str, float]] = {}
    for part in MEASURE.folder.glob("tests-*.json"):
        tests.update(json.loads(part.read_text()))
    counts = counting.read_counts(MEASURE.folder)
    for (nodeid, _), statements in counts.items():
        figures = tests.setdefault(nodeid, {})
        figures["statements"] = figures.get("statements", 0) + statements
    text = (
        render(module_rows(tests))
        + "\n"
        + render_kinds(counts, counting.read_seconds(MEASURE.folder))
    )
    (MEASURE.folder / "measure.md").write_text(text)
    print("\n" + text)
