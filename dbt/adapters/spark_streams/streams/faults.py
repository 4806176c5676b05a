"""Fault injection for the crash tests: kill the process at a named step of a stream build.

Set DBT_SPARK_STREAMS_CRASH_AT to one of STEPS and the build SIGKILLs its own process there,
the way a lost machine would. Unset (always, outside those tests) it does nothing.
"""

import os
import signal
import threading

CRASH_ENV = "DBT_SPARK_STREAMS_CRASH_AT"
STEPS = ("after_pin", "during_write", "after_commit")
WRITE_DELAY_SECONDS = 0.5


def _kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def at_step(step: str) -> None:
    """The adapter's hook at each step of a build's commit protocol (streams/build.py): die
    there if the crash tests asked for this step. At `during_write` the process dies shortly
    after, while the write statement that follows runs."""
    if os.environ.get(CRASH_ENV) != step:
        return
    if step == "during_write":
        timer = threading.Timer(WRITE_DELAY_SECONDS, _kill)
        timer.daemon = True
        timer.start()
        return
    _kill()
