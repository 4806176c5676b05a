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


def test_in_this_process_other_steps_start_no_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same checks in the test's own process (so mutation testing sees the calls): nothing
    asked, or another step asked, neither kills nor arms a timer; `during_write` arms a daemon
    timer (a build that finishes first exits normally)."""
    started: list[tuple[float, bool]] = []

    class Timer:
        def __init__(self, delay: float, then: object) -> None:
            self.delay, self.daemon, self.then = delay, False, then

        def start(self) -> None:
            assert self.then is faults._kill
            started.append((self.delay, self.daemon))

    monkeypatch.setattr(faults, "_kill", lambda: started.append((-1.0, True)))
    monkeypatch.setattr(faults.threading, "Timer", Timer)
    monkeypatch.delenv(faults.CRASH_ENV, raising=False)
    faults.at_step("during_write")
    monkeypatch.setenv(faults.CRASH_ENV, "after_commit")
    faults.at_step("after_pin")
    faults.at_step("during_write")
    assert started == []
    faults.at_step("after_commit")
    assert started == [(-1.0, True)]
    monkeypatch.setenv(faults.CRASH_ENV, "during_write")
    faults.at_step("during_write")
    assert started == [(-1.0, True), (faults.WRITE_DELAY_SECONDS, True)]


def test_the_kill_is_sigkill_of_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(faults.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    faults._kill()
    assert sent == [(os.getpid(), signal.SIGKILL)]
