"""Fault injection for the crash tests: kill the process at a named step of a stream build.

Set DBT_SPARK_STREAMS_CRASH_AT to one of STEPS and the build SIGKILLs its own process there,
the way a lost machine would. Unset (always, outside those tests) it does nothing.

With DBT_SPARK_STREAMS_CRASH_BUILDS=N (default 1) the process dies only once N builds of one
`dbt run --threads N` have all reached the step: the first to arrive wait for the others, so
one kill catches N builds in flight at the same step, as a lost machine running several
threads would. If they do not all arrive within BARRIER_SECONDS, the process exits with
BARRIER_MISSED instead, so the test sees the scenario did not happen.
"""

import os
import signal
import sys
import threading

CRASH_ENV = "DBT_SPARK_STREAMS_CRASH_AT"
BUILDS_ENV = "DBT_SPARK_STREAMS_CRASH_BUILDS"
STEPS = ("after_pin", "during_write", "after_commit")
WRITE_DELAY_SECONDS = 0.5
BARRIER_SECONDS = 300.0
BARRIER_MISSED = 3

_arrived = threading.Condition()
_arrivals: dict[str, int] = {}


def _kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def at_step(step: str) -> None:
    """The adapter's hook at each step of a build's commit protocol (streams/builds/build.py): die
    there if the crash tests asked for this step. At `during_write` the process dies shortly
    after, while the write statements that follow run."""
    if os.environ.get(CRASH_ENV) != step:
        return
    expected = int(os.environ.get(BUILDS_ENV, "1"))
    with _arrived:
        _arrivals[step] = _arrivals.get(step, 0) + 1
        if _arrivals[step] < expected:
            # the last build to arrive kills the process while this one still waits, or (at
            # during_write) lets it start its write
            if not _arrived.wait_for(lambda: _arrivals[step] >= expected, BARRIER_SECONDS):
                _missed(step, expected)
            return
        if step != "during_write":
            _kill()
            return
        _arrived.notify_all()
    timer = threading.Timer(WRITE_DELAY_SECONDS, _kill)
    timer.daemon = True
    timer.start()


def _missed(step: str, expected: int) -> None:
    """Not every build reached the step: end the process so the test sees it, without the
    crash it asked for."""
    sys.stderr.write(
        f"{CRASH_ENV}={step}: only {_arrivals[step]} of {expected} builds reached the step "
        f"within {BARRIER_SECONDS:.0f} s ({BUILDS_ENV}); exiting without the crash.\n"
    )
    sys.stderr.flush()
    os._exit(BARRIER_MISSED)
