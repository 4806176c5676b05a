"""An S3-compatible object store on this machine, for the tests, the benchmarks and the demo:
S3Proxy (Maven Central, org.gaul:s3proxy) serving the S3 REST API over HTTP on loopback from a
folder on disk, with credentials, and one bucket.

    python scripts/object_store.py start <dir> [bucket]   # prints the profile's S3 settings
    python scripts/object_store.py stop <dir>

Its filesystem-nio2 backend keeps each object as a file under <dir>/blobs/<bucket>/, and makes
a PutObject with `If-None-Match: *` atomic (the file is linked into place, and a second put of
the same key gets 412 Precondition Failed), which is what a Delta commit on S3 needs of the
store (docs/guides/object-storage.md). It lacks what a test here does not use: versioning,
object locks, server-side encryption, real IAM policies.
"""

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
JARS = REPO / ".jars" / "s3proxy"
POM = REPO / "scripts" / "s3proxy.pom.xml"
MAIN = "org.gaul.s3proxy.Main"
STATE = "object-store.json"
STARTUP_SECONDS = 120
LOGBACK = """<configuration>
  <appender name="out" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{20} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="out"/></root>
</configuration>
"""
# With a request log (the benchmarks count requests): each request S3Proxy handles, one line
# ("request: ...{GET@... http://host:port/bucket/key?query HTTP/1.1}...") in <dir>/requests.log,
# among S3Proxy's other DEBUG lines of the request handler.
REQUEST_LOG = """<configuration>
  <appender name="out" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{20} - %msg%n</pattern></encoder>
  </appender>
  <appender name="requests" class="ch.qos.logback.core.FileAppender">
    <file>REQUESTS</file>
    <encoder><pattern>%d{HH:mm:ss.SSS} %msg%n</pattern></encoder>
  </appender>
  <logger name="org.gaul.s3proxy.S3ProxyHandler" level="DEBUG" additivity="false">
    <appender-ref ref="requests"/>
  </logger>
  <root level="WARN"><appender-ref ref="out"/></root>
</configuration>
"""
# The JIT's quick tier and the serial collector, as every JVM of the tests runs.
JAVA = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fetch_jars() -> None:
    """S3Proxy's jars into .jars/s3proxy/, once per checkout (Maven, like the Derby server's)."""
    if any(JARS.glob("s3proxy-*.jar")):
        return
    subprocess.run(
        ["mvn", "--quiet", "-f", str(POM), "dependency:copy-dependencies",
         "-DincludeScope=runtime", f"-DoutputDirectory={JARS}"],
        check=True,
    )  # fmt: skip


def start(
    home: Path, bucket: str = "lake", port: int | None = None, request_log: bool = False
) -> dict:
    """Start S3Proxy over <home>/blobs with a new key pair and `bucket`; its address, keys
    and bucket go to <home>/object-store.json (and are returned). `request_log`: every
    request it handles, a line each, in <home>/requests.log."""
    fetch_jars()
    home.mkdir(parents=True, exist_ok=True)
    (home / "blobs" / bucket).mkdir(parents=True, exist_ok=True)
    keys = {"access_key": f"streams{secrets.token_hex(4)}", "secret_key": secrets.token_hex(20)}
    # Its jars carry no logging configuration, and logback's default logs every request at DEBUG.
    logging = (
        REQUEST_LOG.replace("REQUESTS", str(home / "requests.log")) if request_log else LOGBACK
    )
    (home / "logback.xml").write_text(logging)
    state = {"port": port or free_port(), "bucket": bucket, **keys}
    return _launch(home, state)


def restart(home: Path) -> dict:
    """Start S3Proxy again after `kill`: the same port, keys, bucket and objects."""
    return _launch(home, json.loads((home / STATE).read_text()))


def kill(home: Path) -> None:
    """End S3Proxy at once (SIGKILL), as a crashed store ends; `restart` brings it back."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(json.loads((home / STATE).read_text())["pid"], signal.SIGKILL)


def _launch(home: Path, state: dict) -> dict:
    settings = {
        "s3proxy.endpoint": f"http://127.0.0.1:{state['port']}",
        "s3proxy.authorization": "aws-v2-or-v4",
        "s3proxy.identity": state["access_key"],
        "s3proxy.credential": state["secret_key"],
        "jclouds.provider": "filesystem-nio2",
        "jclouds.filesystem.basedir": str(home / "blobs"),
    }
    conf = home / "s3proxy.conf"
    conf.touch(mode=0o600)
    conf.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    with (home / "s3proxy.log").open("a") as log:
        process = subprocess.Popen(
            [*JAVA, f"-Dlogback.configurationFile={home / 'logback.xml'}", "-cp", f"{JARS}/*",
             MAIN, "--properties", str(conf)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    state = {**state, "pid": process.pid}
    (home / STATE).write_text(json.dumps(state))
    (home / STATE).chmod(0o600)
    _wait_for_port(home, process, state["port"])
    return {**state, "endpoint": f"http://127.0.0.1:{state['port']}"}


def stop(home: Path) -> None:
    """Stop the S3Proxy `start` started (its objects stay in <home>/blobs)."""
    state_file = home / STATE
    if not state_file.exists():
        return
    state = json.loads(state_file.read_text())
    with contextlib.suppress(ProcessLookupError):
        os.killpg(state["pid"], signal.SIGTERM)
    state_file.unlink()


def _wait_for_port(home: Path, process: subprocess.Popen, port: int) -> None:
    """Until S3Proxy answers an HTTP request (any status: an unsigned one is refused)."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.5)
    log = (home / "s3proxy.log").read_text()[-4000:]
    raise RuntimeError(f"S3Proxy is not answering on port {port}:\n{log}")


if __name__ == "__main__":
    action, folder = sys.argv[1], Path(sys.argv[2]).resolve()
    if action == "start":
        store = start(folder, sys.argv[3] if len(sys.argv) > 3 else "lake")
        print(
            f"S3Proxy on {store['endpoint']}, bucket {store['bucket']}. Profile "
            "(server_side_parameters):\n"
            f"  spark.hadoop.fs.s3a.endpoint: {store['endpoint']}\n"
            "  spark.hadoop.fs.s3a.path.style.access: 'true'\n"
            "  spark.hadoop.fs.s3a.change.detection.version.required: 'false'\n"
            f"  spark.hadoop.fs.s3a.access.key: {store['access_key']}\n"
            "  spark.hadoop.fs.s3a.secret.key: \"{{ env_var('S3_SECRET_KEY') }}\"\n"
            f'with: export S3_SECRET_KEY=$(python -c "import json; print(json.load(open('
            f"'{folder / STATE}'))['secret_key'])\")\n"
            f"and warehouse_dir: s3a://{store['bucket']}/warehouse"
        )
    elif action == "stop":
        stop(folder)
    else:
        sys.exit("usage: python scripts/object_store.py start|stop <dir> [bucket]")
