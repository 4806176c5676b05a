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


def crash_point(step: str) -> None:
    """Die here if the crash tests asked for this step."""
    if os.environ.get(CRASH_ENV) == step:
        _kill()


def crash_during(step: str) -> threading.Timer | None:
    """Die shortly after this point, while the next statement runs, if asked for this step."""
    if os.environ.get(CRASH_ENV) != step:
        return None
    timer = threading.Timer(WRITE_DELAY_SECONDS, _kill)
    timer.daemon = True
    timer.start()
    return timer
