"""CPU-seconds of every process a pytest worker started, however it started them.

The worker puts a tag in its environment; every process started from it inherits it (dbt
processes, their JVMs, Spark's Python workers, the local cluster's servers), even once its
parent is gone (a SIGKILLed dbt process's JVM, a server started in a session of its own). A
thread samples /proc twice a second and keeps each tagged process's latest CPU time, so a
process that ended still counts with what it had used when last seen.
"""

import os
import threading
import time
import uuid
from pathlib import Path

TAG_ENV = "SPARK_STREAMS_MEASURE_TAG"
INTERVAL_S = 0.5


class TreeCpu:
    """The running total of CPU-seconds used by this process and every tagged one."""

    def __init__(self) -> None:
        self.tag = f"{TAG_ENV}={uuid.uuid4().hex}".encode()
        os.environ[TAG_ENV] = self.tag.decode().split("=", 1)[1]
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.seen: dict[tuple[int, str], float] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self._sample_forever, daemon=True).start()

    def total(self) -> float:
        """CPU-seconds so far (sampled now)."""
        self.sample()
        with self.lock:
            return sum(self.seen.values())

    def sample(self) -> None:
        me = str(os.getpid())
        found: dict[tuple[int, str], float] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if entry.name != me and self.tag not in (entry / "environ").read_bytes():
                    continue
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # utime and stime (the process's own, not its children's: they are tagged too),
            # keyed with the start time so a reused pid is another process
            found[(int(entry.name), fields[19])] = (int(fields[11]) + int(fields[12])) / self.ticks
        with self.lock:
            self.seen.update(found)

    def _sample_forever(self) -> None:
        while True:
            time.sleep(INTERVAL_S)
            self.sample()
