"""A TCP proxy in front of the object store that fails its requests on demand, for `make chaos`:
the faults an S3 client meets in production that a healthy S3Proxy never shows.

    python scripts/fault_proxy.py <listen port> <store port> <dir>

It passes bytes through until told otherwise by `set_mode(dir, mode)` (the mode in
<dir>/fault-mode, then SIGUSR1 to the proxy, whose pid is in <dir>/fault-proxy.pid):

- `slowdown`: every request gets S3's throttling answer, `503 SlowDown`, as AWS sends it when a
  prefix takes more requests than it serves;
- `stall`: requests are read and never answered, so the client's request timeout fires (the
  connections are dropped when the stall ends);
- `pass`: back to normal.

Entering `slowdown` or `stall` resets the connections open at that moment (the client's pool),
so that the fault reaches requests in flight, not only the next connection.
"""

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

MODES = ("pass", "slowdown", "stall")
MODE_FILE = "fault-mode"
PID_FILE = "fault-proxy.pid"
SLOWDOWN = (
    b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nConnection: close\r\n"
    b"Content-Length: %d\r\n\r\n%s"
)
SLOWDOWN_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)
HEAD_END = b"\r\n\r\n"


def start(home: Path, store_port: int) -> int:
    """Start a proxy in front of the store on `store_port`; the port it listens on."""
    home.mkdir(parents=True, exist_ok=True)
    (home / PID_FILE).unlink(missing_ok=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    with (home / "fault-proxy.log").open("w") as log:
        subprocess.Popen([sys.executable, __file__, str(port), str(store_port), str(home)],
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 30
    while not (home / PID_FILE).exists():
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the fault proxy did not start:\n{(home / 'fault-proxy.log').read_text()}"
            )
        time.sleep(0.1)
    return port


def stop(home: Path) -> None:
    with contextlib.suppress(ProcessLookupError, FileNotFoundError, ValueError):
        os.kill(int((home / PID_FILE).read_text()), signal.SIGTERM)


def set_mode(home: Path, mode: str) -> None:
    """Tell the proxy serving <home> to pass, slow down or stall from now on."""
    if mode not in MODES:
        raise ValueError(f"a fault proxy mode is one of {MODES}, not {mode!r}")
    (home / MODE_FILE).write_text(mode)
    with contextlib.suppress(ProcessLookupError, FileNotFoundError):
        os.kill(int((home / PID_FILE).read_text()), signal.SIGUSR1)


class Proxy:
    def __init__(self, home: Path, upstream: int) -> None:
        self.home = home
        self.upstream = upstream
        self.mode = "pass"
        self.piped: set[asyncio.StreamWriter] = set()
        self.held: set[asyncio.StreamWriter] = set()

    def reread(self) -> None:
        """The mode in the mode file; entering a fault resets what is open, leaving a stall
        drops what it held."""
        mode = (self.home / MODE_FILE).read_text().strip()
        before, self.mode = self.mode, mode if mode in MODES else "pass"
        if self.mode != "pass" and before == "pass":
            for writer in list(self.piped):
                writer.transport.abort()
        if before == "stall" and self.mode != "stall":
            for writer in list(self.held):
                writer.transport.abort()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if self.mode == "slowdown":
                await reader.readuntil(HEAD_END)
                writer.write(SLOWDOWN % (len(SLOWDOWN_BODY), SLOWDOWN_BODY))
                await writer.drain()
            elif self.mode == "stall":
                self.held.add(writer)
                await reader.read()  # until the client gives up or the stall ends
            else:
                await self.pipe(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self.held.discard(writer)
            writer.transport.abort()

    async def pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        store_reader, store_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        self.piped.add(writer)
        try:
            await asyncio.gather(copy(reader, store_writer), copy(store_reader, writer))
        finally:
            self.piped.discard(writer)
            store_writer.transport.abort()


async def copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    finally:
        sink.transport.abort()


async def main(port: int, upstream: int, home: Path) -> None:
    proxy = Proxy(home, upstream)
    (home / MODE_FILE).write_text("pass")
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, proxy.reread)
    server = await asyncio.start_server(proxy.serve, "127.0.0.1", port)
    (home / PID_FILE).write_text(str(os.getpid()))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]).resolve()))
