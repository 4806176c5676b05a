"""The crash tests' fault injection (no JVM): a build's process dies at the step asked for,
shortly after it during the write, and never when nothing is asked."""

import multiprocessing
import os
import signal
import time

import pytest

from dbt.adapters.spark_streams.streams import faults


def _step_then_live(step: str, seconds: float) -> None:
    faults.at_step(step)
    time.sleep(seconds)


def exit_code(asked: str | None, step: str, seconds: float = 0.0) -> int | None:
    """How a process that reaches `step` with `asked` in the environment ends."""
    if asked is None:
        os.environ.pop(faults.CRASH_ENV, None)
    else:
        os.environ[faults.CRASH_ENV] = asked
    try:
        process = multiprocessing.get_context("fork").Process(
            target=_step_then_live, args=(step, seconds)
        )
        process.start()
        process.join(10)
        return process.exitcode
    finally:
        os.environ.pop(faults.CRASH_ENV, None)


@pytest.mark.parametrize("step", ["after_pin", "after_commit"])
def test_the_process_dies_at_the_step_asked_for(step: str) -> None:
    assert exit_code(step, step) == -signal.SIGKILL


def test_during_the_write_it_dies_shortly_after_the_step() -> None:
    assert exit_code("during_write", "during_write", seconds=3) == -signal.SIGKILL
    assert exit_code("during_write", "during_write", seconds=0) == 0  # done before the timer


@pytest.mark.parametrize(("asked", "step"), [(None, "after_pin"), ("after_commit", "after_pin")])
def test_other_steps_and_no_request_go_on(asked: str | None, step: str) -> None:
    assert exit_code(asked, step) == 0
    assert faults.STEPS == ("after_pin", "during_write", "after_commit")
