"""The crash tests' fault injection (no JVM): a build's process dies at the step asked for,
shortly after it during the write, and never when nothing is asked."""

import multiprocessing
import os
import signal
import threading
import time

import pytest

from dbt.adapters.spark_streams.streams.builds import faults


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


def _builds_reach(step: str, builds: int, expected: int, seconds: float) -> None:
    """`builds` threads of one process reach `step` while `expected` are asked for."""
    os.environ[faults.BUILDS_ENV] = str(expected)
    faults._arrivals.clear()  # a fresh process counts from zero; this fork inherited counts
    threads = [
        threading.Thread(target=_step_then_live, args=(step, seconds)) for _ in range(builds)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def barrier_exit(step: str, builds: int, expected: int, seconds: float = 0.0) -> int | None:
    """How a process ends when `builds` of its threads reach `step` and `expected` are asked."""
    os.environ[faults.CRASH_ENV] = step
    try:
        process = multiprocessing.get_context("fork").Process(
            target=_builds_reach, args=(step, builds, expected, seconds)
        )
        process.start()
        process.join(10)
        return process.exitcode
    finally:
        os.environ.pop(faults.CRASH_ENV, None)
        os.environ.pop(faults.BUILDS_ENV, None)


@pytest.mark.parametrize("step", faults.STEPS)
def test_with_several_builds_the_process_dies_once_all_reached_the_step(step: str) -> None:
    assert barrier_exit(step, builds=3, expected=3, seconds=3) == -signal.SIGKILL


def test_builds_that_do_not_all_arrive_end_the_process_with_its_own_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(faults, "BARRIER_SECONDS", 0.2)
    assert barrier_exit("after_commit", builds=2, expected=3) == faults.BARRIER_MISSED


def test_the_first_arrivals_wait_for_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process: two builds asked, the first waits (no kill yet), the second kills."""
    killed: list[str] = []
    monkeypatch.setattr(faults, "_kill", lambda: killed.append(threading.current_thread().name))
    monkeypatch.setattr(faults, "_arrivals", {})
    monkeypatch.setenv(faults.CRASH_ENV, "after_pin")
    monkeypatch.setenv(faults.BUILDS_ENV, "2")
    first = threading.Thread(target=faults.at_step, args=("after_pin",), name="first")
    first.start()
    time.sleep(0.2)
    assert first.is_alive() and killed == []
    faults.at_step("after_pin")
    assert killed == [threading.current_thread().name]
    with faults._arrived:  # the kill would have ended the waiting build; here wake it
        faults._arrived.notify_all()
    first.join(5)
    assert not first.is_alive() and killed == [threading.current_thread().name]


def test_a_missed_barrier_says_so_and_exits_with_its_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In this process: one of two builds arrives, waits out the barrier, and the process
    would exit with BARRIER_MISSED after saying why on stderr."""
    exits: list[object] = []
    monkeypatch.setattr(faults, "_kill", lambda: exits.append("killed"))
    monkeypatch.setattr(faults, "BARRIER_SECONDS", 0.1)
    monkeypatch.setattr(faults, "_arrivals", {})
    monkeypatch.setattr(faults.os, "_exit", exits.append)
    monkeypatch.setenv(faults.CRASH_ENV, "after_commit")
    monkeypatch.setenv(faults.BUILDS_ENV, "2")
    build = threading.Thread(target=faults.at_step, args=("after_commit",), daemon=True)
    build.start()
    build.join(5)
    assert not build.is_alive() and exits == [faults.BARRIER_MISSED]
    assert capsys.readouterr().err == (
        "DBT_SPARK_STREAMS_CRASH_AT=after_commit: only 1 of 2 builds reached the step within "
        "0 s (DBT_SPARK_STREAMS_CRASH_BUILDS); exiting without the crash.\n"
    )
