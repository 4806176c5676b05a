"""A PostgreSQL server on this machine holding a Hive metastore, for the tests and the demo:
Debian's PostgreSQL (installed with apt-get when it is missing and this runs as root), a data
folder of its own, a `metastore` database and role with a password, on loopback.

    python scripts/postgres_metastore.py start <dir> [port]   # prints the profile's keys
    python scripts/postgres_metastore.py stop <dir>

The metastore's tables are created by Spark's Hive client on its first start against the
empty database. PostgreSQL refuses to run as root: as root, the server runs as the `postgres`
user the package creates.
"""

import getpass
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
JARS = REPO / ".jars" / "postgres"
POM = REPO / "scripts" / "postgres.pom.xml"
STATE = "postgres.json"
DATABASE = ROLE = "metastore"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def binaries() -> Path:
    """PostgreSQL's bin folder, installed from Debian's packages first if missing."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "postgresql"], check=True, env=env)
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        raise RuntimeError(
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); install "
            "Debian's postgresql package, or run this as root to have it installed."
        )
    return found[-1].parent


def driver_jar() -> Path:
    """PostgreSQL's JDBC driver in .jars/postgres/, fetched with Maven on first use."""
    jars = sorted(JARS.glob("postgresql-*.jar"))
    if not jars:
        subprocess.run(
            ["mvn", "--quiet", "-f", str(POM), "dependency:copy-dependencies",
             f"-DoutputDirectory={JARS}"],
            check=True,
        )  # fmt: skip
        jars = sorted(JARS.glob("postgresql-*.jar"))
    return jars[-1]


def as_server_user(command: list[str]) -> list[str]:
    """`command` as the user the server runs as: `postgres` when this runs as root."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


def start(home: Path, port: int | None = None, databases: tuple[str, ...] = ()) -> dict:
    """Initialise (first time) and start the server in <home>/pgdata, with a `metastore`
    database and, the first time, the `databases` named (one metastore each, owned by the same
    role); the profile's keys go to <home>/postgres.json (its owner's only) and are returned."""
    bin_dir, jar = binaries(), driver_jar()
    home.mkdir(parents=True, exist_ok=True)
    data, sockets = home / "pgdata", home / "sockets"
    state_file = home / STATE
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    port = port or state.get("port") or free_port()
    password = state.get("password") or secrets.token_hex(16)
    first = not data.exists()
    sockets.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(home, "postgres")
        shutil.chown(sockets, "postgres")
    if first:
        subprocess.run(
            as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres",
                            "--auth-local=trust", "--auth-host=scram-sha-256"]),
            check=True, capture_output=True,
        )  # fmt: skip
    options = f"-p {port} -k {sockets} -h 127.0.0.1 -c max_connections=200"
    subprocess.run(
        as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(home / "pg.log"),
                        "-o", options, "-w", "start"]),
        check=True, capture_output=True,
    )  # fmt: skip
    if first:
        psql = as_server_user(
            [str(bin_dir / "psql"), "-h", str(sockets), "-p", str(port), "-U", "postgres",
             "-v", "ON_ERROR_STOP=1", "-q"]
        )  # fmt: skip
        subprocess.run(
            [*psql, "-c", f"create role {ROLE} login password '{password}'"],
            check=True,
            capture_output=True,
        )
        for database in (DATABASE, *databases):
            subprocess.run(
                [*psql, "-c", f"create database {database} owner {ROLE}"],
                check=True,
                capture_output=True,
            )
    state = {
        "port": port,
        "password": password,
        "url": f"jdbc:postgresql://127.0.0.1:{port}/{DATABASE}",
        "user": ROLE,
        "driver_jar": str(jar),
        "bin": str(bin_dir),
    }
    state_file.write_text(json.dumps(state))
    state_file.chmod(0o600)
    return state


def create_hive_tables(state: dict, url: str | None = None) -> None:
    """Hive's tables in the database at `url` (the `metastore` database by default), as the
    embedded session creates them at its first start: for a server that opens the metastore
    itself (a Spark Connect or Thrift Server), which would otherwise find none."""
    from pyspark.find_spark_home import _find_spark_home

    from dbt.adapters.spark_streams.session.stores.metastore_schema import create_schema

    login = {"url": url or state["url"], "driver": "org.postgresql.Driver",
             "user": state["user"], "password": state["password"]}  # fmt: skip
    create_schema(Path(_find_spark_home()), state["driver_jar"], login, [state["password"]])


def stop(home: Path) -> None:
    """Stop the server (its data stays in <home>/pgdata for the next start)."""
    state_file = home / STATE
    if not state_file.exists():
        return
    state = json.loads(state_file.read_text())
    subprocess.run(
        as_server_user([str(Path(state["bin"]) / "pg_ctl"), "-D", str(home / "pgdata"),
                        "-m", "fast", "-w", "stop"]),
        check=False, capture_output=True,
    )  # fmt: skip


def kill(home: Path) -> None:
    """End the server at once (its postmaster SIGKILLed), as a crashed database ends."""
    pid_file = home / "pgdata" / "postmaster.pid"
    if pid_file.exists():
        subprocess.run(["kill", "-9", pid_file.read_text().split()[0]], check=False)


if __name__ == "__main__":
    action, folder = sys.argv[1], Path(sys.argv[2]).resolve()
    if action == "start":
        pg = start(folder, int(sys.argv[3]) if len(sys.argv) > 3 else None)
        print(
            f"PostgreSQL on 127.0.0.1:{pg['port']} (as {getpass.getuser()}). Profile:\n"
            f"  metastore_url: {pg['url']}\n  metastore_user: {pg['user']}\n"
            "  metastore_password: \"{{ env_var('METASTORE_PASSWORD') }}\"\n"
            f"  metastore_driver_jar: {pg['driver_jar']}\n"
            f'with: export METASTORE_PASSWORD=$(python -c "import json; print(json.load(open('
            f"'{folder / STATE}'))['password'])\")"
        )
    elif action == "stop":
        stop(folder)
    else:
        sys.exit("usage: python scripts/postgres_metastore.py start|stop <dir> [port]")
