"""One build of a consumer at a time across processes, on an object store: a lease object per
consumer, taken with a conditional PUT before the build reads its offsets and removed once its
write committed.

Why: Delta 4.4's S3 log store makes commits exclusive only inside one JVM. It writes commit N
with `create(N.json, overwrite=false)`, which S3A turns into an existence check and a plain
PUT; two dbt processes (two drivers) committing N at once both succeed, the later PUT replacing
the earlier commit. S3A's conditional create (`If-None-Match: *`) is only reached through its
builder API, which Delta does not call; this module calls it. The lease
`<warehouse>/_stream_leases/<consumer>.json` is created only if absent, so of two processes
building the same consumer the second is refused with a sentence and writes nothing.

A lease outlives a killed process: on the same host the next build takes over a lease whose
process is gone; elsewhere, a lease older than `stale_after` seconds is taken over, each take-
over a PUT conditional on the old lease's ETag (If-Match), so two processes never both win it.
Over Spark Connect every client writes through the server's one driver, whose log store already
serialises them: no lease is taken there.

The tables every build may write besides its target (`dbt_streams_files`, where an insert-only
stream records the files it consumed, and the sources' properties) are written under one more
lease, `_shared_writes`, which a build waits for instead of being refused: a commit there lost
to another process's simultaneous one would make a stream read its files again.
"""

import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from py4j.protocol import Py4JJavaError

from dbt.adapters.spark_streams.session.driver.java import java_class
from dbt.adapters.spark_streams.session.embedded import running_session
from dbt.adapters.spark_streams.session.stores.object_store import S3A
from dbt.adapters.spark_streams.streams.errors import StreamConsumedElsewhere

LEASES = "_stream_leases"
STALE_AFTER_S = 6 * 3600
CONDITIONAL = "fs.option.create.conditional.overwrite"
CONDITIONAL_ETAG = "fs.option.create.conditional.overwrite.etag"
REFUSED = ("RemoteFileChangedException", "FileAlreadyExistsException")
_HELD: set[str] = set()  # the owners of the leases this process holds
SHARED_WRITES = "_shared_writes"
SHARED_WAIT_S = 600.0  # a shared write takes seconds; a wait this long is a stuck holder
SHARED_POLL_S = 0.5


@dataclass(frozen=True)
class Lease:
    path: str
    owner: str


def lease_path(warehouse: str, consumer: str) -> str:
    return f"{warehouse.rstrip('/')}/{LEASES}/{consumer}.json"


def acquire(jvm: Any, conf: Any, warehouse: str, consumer: str, model: str) -> Lease:
    """Take the consumer's lease, or refuse the build with StreamConsumedElsewhere."""
    path = java_class(jvm, "org.apache.hadoop.fs.Path")(lease_path(warehouse, consumer))
    filesystem = path.getFileSystem(conf)
    mine: dict[str, Any] = {
        "owner": uuid.uuid4().hex,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "since": time.time(),
    }
    body = json.dumps(mine).encode()
    try:
        _put(filesystem, path, body, etag=None)
        _HELD.add(mine["owner"])
        return Lease(str(path), mine["owner"])
    except Py4JJavaError as exc:
        if not _refused(exc):
            raise
    holder, etag = _read(filesystem, path)
    if not _abandoned(holder):
        raise StreamConsumedElsewhere(_sentence(model, holder))
    try:
        _put(filesystem, path, body, etag=etag)
    except Py4JJavaError as exc:
        if not _refused(exc):
            raise
        raise StreamConsumedElsewhere(_sentence(model, _read(filesystem, path)[0])) from None
    _HELD.add(mine["owner"])
    return Lease(str(path), mine["owner"])


def release(jvm: Any, conf: Any, lease: Lease) -> None:
    """Remove the lease if it is still this build's."""
    path = java_class(jvm, "org.apache.hadoop.fs.Path")(lease.path)
    filesystem = path.getFileSystem(conf)
    holder, _ = _read(filesystem, path)
    if holder.get("owner") == lease.owner:
        filesystem.delete(path, False)
    _HELD.discard(lease.owner)


def _put(filesystem: Any, path: Any, body: bytes, etag: str | None) -> None:
    builder = filesystem.createFile(path)
    if etag is None:
        builder = builder.overwrite(False).must(CONDITIONAL, True)
    else:
        builder = builder.overwrite(True).must(CONDITIONAL_ETAG, etag)
    stream = builder.build()
    try:
        stream.write(body)
    finally:
        stream.close()


def _read(filesystem: Any, path: Any) -> tuple[dict, str | None]:
    try:
        status = filesystem.getFileStatus(path)
        stream = filesystem.open(path)
        try:
            text = bytes(stream.readAllBytes()).decode()
        finally:
            stream.close()
        return json.loads(text), str(status.getEtag())
    except (Py4JJavaError, ValueError):
        return {}, None  # gone meanwhile, or unreadable: the next attempt decides


def _refused(exc: Py4JJavaError) -> bool:
    return any(name in str(exc.java_exception.getClass().getName()) for name in REFUSED)


def _abandoned(holder: dict) -> bool:
    """A lease whose process is gone (same host), or older than STALE_AFTER_S."""
    if not holder:
        return False
    since = float(holder.get("since", 0))
    if time.time() - since > STALE_AFTER_S:
        return True
    if holder.get("host") != socket.gethostname():
        return False
    try:
        os.kill(int(holder.get("pid", 0)), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError):
        return False
    # this process's own lease, left by a build that did not reach its release
    return int(holder.get("pid", 0)) == os.getpid() and holder.get("owner") not in _HELD


def _sentence(model: str, holder: dict) -> str:
    where = f"process {holder.get('pid')} on {holder.get('host')}" if holder else "another run"
    since = time.strftime("%H:%M:%S", time.localtime(float(holder.get("since", 0) or 0)))
    return (
        f"{model} is being built by another process ({where}, since {since}): its streams are "
        "being consumed by another run, so this build read nothing and moved no offset. Run "
        "the model again once that run has finished; the lease of a run that was killed is "
        f"taken over once its process is gone (same host) or after {STALE_AFTER_S // 3600} "
        "hours."
    )


def _on_object_store() -> tuple[Any, Any, str] | None:
    """The JVM, the Hadoop configuration and the warehouse, when this process's embedded
    session keeps its warehouse on S3; None otherwise (no lease to take)."""
    session = running_session()
    if session is None:
        return None
    warehouse = str(session.conf.get("spark.sql.warehouse.dir", ""))
    if not warehouse.startswith(S3A):
        return None
    return session._jvm, session._jsc.hadoopConfiguration(), warehouse


def take(target: str, model: str) -> Lease | None:
    """The lease of the consumer writing `target` (schema.table) on an object store; None
    where there is nothing to take."""
    store = _on_object_store()
    if store is None:
        return None
    jvm, conf, warehouse = store
    return acquire(jvm, conf, warehouse, target.replace("`", ""), model)


@contextmanager
def shared_writes(writer: str) -> Iterator[None]:
    """Hold the shared tables' lease, on an object store, for a write of `writer` ("Stream
    s") to them: waited for while another process holds it (SHARED_WAIT_S at most)."""
    store = _on_object_store()
    if store is None:
        yield
        return
    jvm, conf, warehouse = store
    deadline = time.monotonic() + SHARED_WAIT_S
    while True:
        try:
            held = acquire(jvm, conf, warehouse, SHARED_WRITES, writer)
            break
        except StreamConsumedElsewhere as refused:
            if time.monotonic() > deadline:
                raise StreamConsumedElsewhere(_still_held(writer, str(refused))) from None
            time.sleep(SHARED_POLL_S)
    try:
        yield
    finally:
        release(jvm, conf, held)


def _still_held(writer: str, refusal: str) -> str:
    holder = refusal.split("(", 1)[1].split(")", 1)[0] if "(" in refusal else "another run"
    return (
        f"{writer}: waited {SHARED_WAIT_S:.0f} s to write the tables its streams share with other "
        f"models (dbt_streams_files, the sources' properties), held by another build ({holder}), "
        "and gave up: this build moved no offset. Run it again; the lease of a run that was "
        f"killed is taken over once its process is gone (same host) or after "
        f"{STALE_AFTER_S // 3600} hours."
    )


def give_back(lease: Lease | None) -> None:
    """Release a lease `take` returned (None: nothing)."""
    session = running_session()
    if lease is not None and session is not None:
        release(session._jvm, session._jsc.hadoopConfiguration(), lease)
