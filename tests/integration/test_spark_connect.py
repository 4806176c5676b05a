"""Streams over Spark Connect (`method: connect`) on a real cluster of separate processes.

`scripts/cluster.py` starts a Spark standalone master, a worker (two cores), a Spark Connect
server with Delta attached to the master, which requires a token, a TLS proxy in front of it,
and a Derby network server holding the Hive metastore; every process sees one warehouse. The
integration project (`threads: 4`, the token from `env_var()`) is built over it end to end, as
a user builds it, each step a separate dbt process that must see what the previous one built:
sources, a build, its summary (every relation's rows) and a batch of changes, the build that
consumes the batch once (its data tests pass: the mirror equals its source, changes() equals a
peek, the view stream's mirror equals its view, the insert-only stream of a Parquet table logs
every landed event once, the materialized view equals the table mart, the customers' Debezium
feed applied equals the customers), its summary (each
stream model holds the batch once, the history every version in order, show_streams every
stream). Before the consuming build, the server is
killed in the middle of a build: that build fails within the profile's bound, no stream whose
build failed moves its offset, and once the server is back the next build consumes the batch
exactly once; a build with nothing pending is the second test's.
The registry must show each table stream's offset at its source's newest version, the
append-only audit every order once, and a query Delta rejects must show Delta's error, not the
server's stack trace.
"""

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.credentials import SparkStreamsCredentials
from dbt.adapters.spark_streams.session.servers.connect import new_connect_session
from dbt.adapters.spark_streams.session.servers.lost_servers import forget_lost_servers
from dbt.adapters.spark_streams.streams.builds.faults import CRASH_ENV
from scripts import cluster
from tests.conftest import INTERPRETED
from tests.integration.cluster_queries import (
    behind_newest,
    newest_log_version,
    query,
    shop_offsets,
    succeeded_models,
    wait_for,
)
from tests.integration.dbt_process import dbt_command, run_dbt_process
from tests.integration.shop import (
    CUSTOMERS,
    assert_consumed_summary,
    assert_first_summary,
    copy_project,
)

# The functional tests' interpreted expressions, without their fixed (non-adaptive) plans.
NO_CODEGEN = {key: value for key, value in INTERPRETED.items() if "codegen" in key}
PAST_LATEST_CHANGES = "select * from table_changes('shop_raw.orders', 999, 1000)"
# The profile's bound on a server that went away: connect_timeout x (connect_retries + 1).
CONNECT_TIMEOUT, CONNECT_RETRIES = 5, 1
BOUND_SECONDS = CONNECT_TIMEOUT * (CONNECT_RETRIES + 1)


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The cluster's addresses, token and CA file. Its server plans adaptively, as Spark does
    by default, and evaluates expressions interpreted, as the functional tests do: compiling
    generated code for each new statement, on the server and again on the executor, cost
    this module a sixth of its CPU (930 against 781 CPU-seconds, side by side). Generated
    code stays covered where a user's server runs it: the Spark Thrift Server of `make
    matrix` (every strategy, table, view and insert-only streams, `changes()`, history) and
    `make chaos`'s cluster. One worker with both cores: one executor JVM loading what two
    would, for the same statements (`make chaos` kills workers, and starts two)."""
    home = tmp_path_factory.mktemp("cluster")
    try:
        yield {**cluster.start(home, server_confs=NO_CODEGEN, workers=1), "home": home}
    finally:
        cluster.stop(home)


def shop_project(spark_cluster: dict, root: Path) -> Path:
    """A copy of the integration project whose profile reads the token from the environment
    and bounds a server that went away at BOUND_SECONDS."""
    shop = copy_project(root)
    (shop / "profiles.yml").write_text(
        "shop:\n  target: dev\n  outputs:\n    dev:\n      type: spark_streams\n"
        f"      method: connect\n      host: {spark_cluster['host']}\n"
        "      token: \"{{ env_var('SPARK_CONNECT_TOKEN') }}\"\n"
        f"      connect_timeout: {CONNECT_TIMEOUT}\n      connect_retries: {CONNECT_RETRIES}\n"
        "      schema: shop\n      threads: 4\n"
    )
    return shop


@pytest.fixture(scope="module")
def shop(spark_cluster: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The integration project's copy over the cluster, which the module's tests build on in
    turn."""
    return shop_project(spark_cluster, tmp_path_factory.mktemp("shop-cluster"))


def test_integration_project_over_the_cluster(spark_cluster: dict, shop: Path) -> None:
    token = {"SPARK_CONNECT_TOKEN": spark_cluster["token"]}

    def dbt(*args: str) -> subprocess.CompletedProcess[str]:
        return run_dbt_process(shop, *args, env=token)

    sources = ("run-operation", "create_shop_sources", "--args", f"{{customers: {CUSTOMERS}}}")
    for step in (sources, ("build", "--empty"), ("build",)):
        done = dbt(*step)
        assert done.returncode == 0, done.stdout + done.stderr
        if "--empty" in step:  # as CI jobs check a project: every model, nothing consumed
            for model in ("revenue_by_customer", "order_customers_mirror", "customers_mirror"):
                line = next(line for line in done.stdout.splitlines() if f"shop.{model} " in line
                            and " OK " in line)  # fmt: skip
                assert "OK, --empty: target created empty, nothing consumed" in line, line
    built = shop_offsets(spark_cluster)
    # four table streams, one view stream and its two tables, the materialized view's three,
    # the Debezium feed's two
    assert len(built) == 12, built

    changed = dbt("run-operation", "summary_then_changes")
    assert changed.returncode == 0, changed.stdout + changed.stderr
    assert_first_summary(changed.stdout)

    # The server dies in the middle of the next build, and comes back.
    server_killed_mid_build(spark_cluster, shop, token)
    consumed = dbt("build")
    assert consumed.returncode == 0, consumed.stdout + consumed.stderr
    assert_consumed_once(spark_cluster, consumed.stdout)
    moved = shop_offsets(spark_cluster)
    assert all(moved[name] > built[name] for name in ("customers_mirror__customers",)), moved

    printed = dbt("run-operation", "print_shop_summary")
    assert printed.returncode == 0, printed.stdout + printed.stderr
    assert_consumed_summary(printed.stdout)

    # A Delta error reaches the user as Delta words it, without the server's JVM stack.
    rejected = dbt("show", "--inline", PAST_LATEST_CHANGES)
    assert rejected.returncode != 0, rejected.stdout
    assert "[DELTA_CDC_START_VERSION_AFTER_LATEST] Start version 999" in rejected.stdout, (
        rejected.stdout
    )
    assert "JVM stacktrace" not in rejected.stdout, rejected.stdout


def assert_consumed_once(spark_cluster: dict, build_output: str) -> None:
    """The build's data tests passed and every offset is at its source's newest version; the
    append-only audit holds every order once (orders are inserted and updated, never deleted,
    and an append-only stream reports only the inserts)."""
    assert "PASS assert_customers_mirror_matches_source" in build_output
    assert "PASS assert_pending_changes_match_peek" in build_output  # changes() over Connect
    assert "PASS assert_order_customers_mirror_matches_view" in build_output
    assert "PASS assert_order_events_logged_once" in build_output
    assert "PASS assert_revenue_by_customer_matches_table" in build_output
    assert "PASS assert_cdc_feed_matches_source" in build_output
    assert behind_newest(spark_cluster) == {}
    audited = query(
        spark_cluster, "select count(*), count(distinct order_id) from shop.orders_audit"
    )
    assert audited == query(spark_cluster, "select count(*), count(*) from shop_raw.orders")


def server_killed_mid_build(spark_cluster: dict, shop: Path, token: dict[str, str]) -> None:
    """Kill the Connect server once a stream build has started: the build fails within the
    bound, only streams whose model succeeded moved their offsets, and the server comes back."""
    before = shop_offsets(spark_cluster)
    build = subprocess.Popen(**dbt_command(shop, "build", env=token))
    assert build.stdout is not None
    seen = []
    for line in build.stdout:
        seen.append(line)
        if "START sql stream_incremental model" in line:
            break
    cluster.kill_connect(spark_cluster["home"])
    killed = time.monotonic()
    output = "".join(seen) + build.communicate(timeout=600)[0]
    took = time.monotonic() - killed
    assert build.returncode != 0, output
    # The statements in flight retry for about the bound; then every node left fails at once
    # (session/servers/lost_servers.py). Generous against a loaded machine: without the bound the
    # client retried for ten minutes, and each node waited a bound of its own.
    assert took < BOUND_SECONDS * 3, (took, output)
    assert "stopped answering" in output or "No Spark Connect server answered" in output
    cluster.start_connect(spark_cluster["home"])
    after = shop_offsets(spark_cluster)
    succeeded = succeeded_models(shop)
    moved = {name for name in after if after[name] != before.get(name)}
    assert {name.split("__")[0] for name in moved} <= succeeded, (moved, succeeded, output)
    print(f"server killed mid-build: the build ended {took:.1f} s later; moved: {moved}")


def test_a_write_whose_client_never_heard_back(spark_cluster: dict, shop: Path) -> None:
    """Two builds that cannot know whether their write committed: the server dies after the
    MERGE's commit and before its reply, and the client dies after sending its MERGE while the
    server goes on and commits it. Each time the build's error (or death) leaves the registry
    behind the target's committed offsets, and the next build reads them from the target's
    history: it finds nothing pending, consumes nothing twice, and the mirror equals its
    source. The server is held at the moment between commit and reply by a checkpoint after
    every commit of the mirror (Delta writes it before the statement returns), and killed
    when the commit's log file appears."""
    token = {"SPARK_CONNECT_TOKEN": spark_cluster["token"]}
    log = spark_cluster["home"] / "warehouse" / "shop.db" / "customers_mirror" / "_delta_log"
    query(spark_cluster, MIRROR_CHECKPOINTS_EVERY_COMMIT)

    new_customer(spark_cluster)
    before = newest_log_version(log)
    build = subprocess.Popen(**dbt_command(shop, "run", "-s", "customers_mirror", env=token))
    wait_for(lambda: newest_log_version(log) > before or build.poll() is not None)
    assert build.poll() is None, "the reply came before the server could be killed"
    cluster.kill_connect(spark_cluster["home"])
    output = build.communicate(timeout=600)[0]
    cluster.start_connect(spark_cluster["home"])
    assert build.returncode != 0, output
    assert "it may have committed it, with its offsets" in output, output
    assert_found_in_history(spark_cluster, shop, token)

    new_customer(spark_cluster)
    before = newest_log_version(log)
    crash = {CRASH_ENV: "during_write"}
    killed = run_dbt_process(shop, "run", "-s", "customers_mirror", env={**token, **crash})
    assert killed.returncode == -9, killed.stdout
    wait_for(lambda: newest_log_version(log) > before)  # the server commits the orphaned write
    assert_found_in_history(spark_cluster, shop, token)


MIRROR_CHECKPOINTS_EVERY_COMMIT = (
    "alter table shop.customers_mirror set tblproperties ('delta.checkpointInterval' = '1')"
)


def new_customer(spark_cluster: dict) -> None:
    query(spark_cluster, "insert into shop_raw.customers select max(customer_id) + 1, 'n', "
          "'n@shop.example', 'JP', current_timestamp() from shop_raw.customers")  # fmt: skip


def assert_found_in_history(spark_cluster: dict, shop: Path, token: dict[str, str]) -> None:
    """The registry lags the mirror's commit; the next build finds the commit, consumes
    nothing, and the mirror equals its source."""
    stream = "customers_mirror__customers"
    committed = query(spark_cluster, "describe history shop.customers_mirror limit 1")[0]
    assert f'"{stream}"' in str(committed), committed
    assert behind_newest(spark_cluster).get(stream) is not None
    again = run_dbt_process(shop, "build", "-s", "customers_mirror+", env=token)
    assert again.returncode == 0, again.stdout
    assert "OK, no pending changes" in again.stdout, again.stdout
    assert "PASS assert_customers_mirror_matches_source" in again.stdout
    assert stream not in behind_newest(spark_cluster)


def connect_credentials(spark_cluster: dict, **keys: object) -> SparkStreamsCredentials:
    profile = {"method": "connect", "schema": "shop", "connect_timeout": 5, **keys}
    return SparkStreamsCredentials.from_dict({"host": spark_cluster["host"], **profile})


def refusal(creds: SparkStreamsCredentials) -> str:
    """The error a connection with these credentials ends in."""
    with pytest.raises(FailedToConnectError) as refused:
        new_connect_session(creds).stop()
    return str(refused.value)


def test_the_server_wants_its_token_and_tls_its_ca(spark_cluster: dict) -> None:
    """Spark's token check refuses a missing or wrong token, saying so without the token; the
    TLS address serves a client that trusts the test CA (ca_cert) and refuses one that does
    not; the token and the CA together give a working session."""
    wrong = "wrong-" + spark_cluster["token"][::-1]
    missing = refusal(connect_credentials(spark_cluster))
    assert "UNAUTHENTICATED" in missing or "token" in missing.lower(), missing
    said = refusal(connect_credentials(spark_cluster, token=wrong))
    assert "UNAUTHENTICATED" in said or "token" in said.lower(), said
    assert wrong not in said and spark_cluster["token"] not in said

    tls = {"host": spark_cluster["tls_host"], "token": spark_cluster["token"]}
    untrusted = refusal(connect_credentials(spark_cluster, **tls))
    assert "the TLS handshake failed (CERTIFICATE_VERIFY_FAILED)" in untrusted, untrusted
    assert "set ca_cert" in untrusted and spark_cluster["token"] not in untrusted
    forget_lost_servers()  # as dbt does when an invocation ends
    trusted = connect_credentials(spark_cluster, **tls, ca_cert=spark_cluster["ca_cert"])
    session = new_connect_session(trusted)
    try:
        assert session.sql("select 41 + 1").collect()[0][0] == 42
    finally:
        session.stop()


def test_the_sessions_confs_and_one_the_server_refuses(spark_cluster: dict) -> None:
    """server_side_parameters are set on the server's session as it opens; a static conf,
    which no session can set, fails the connection with a sentence naming it."""
    token = spark_cluster["token"]
    ssp = {"spark.sql.shuffle.partitions": "7"}
    session = new_connect_session(
        connect_credentials(spark_cluster, token=token, server_side_parameters=ssp)
    )
    try:
        assert session.conf.get("spark.sql.shuffle.partitions") == "7"
        assert session.conf.get("spark.sql.ansi.enabled") == "false"  # dbt-spark's
    finally:
        session.stop()
    static = {"spark.sql.warehouse.dir": "/elsewhere"}
    said = refusal(connect_credentials(spark_cluster, token=token, server_side_parameters=static))
    assert (
        f"The Spark Connect server at {spark_cluster['host']} refused server_side_parameters' "
        "spark.sql.warehouse.dir for the session ([CANNOT_MODIFY_STATIC_CONFIG] Cannot modify "
        'the value of the static Spark config: "spark.sql.warehouse.dir". SQLSTATE: 46110). A '
        "session can set only Spark SQL confs that are not static: give this one to the server "
        "as it starts (--conf or spark-defaults.conf)"
    ) in said, said
    assert "stacktrace" not in said and token not in said


SECRETS_MODEL = "select * from shop_raw.no_such_table_here"


def test_no_secret_in_anything_a_run_prints_or_writes(
    spark_cluster: dict, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Secrets in every place a profile takes them: the token key (from env_var) over TLS, a
    token inside host, metastore_password (from env_var) for the embedded session on the
    cluster's metastore, a password inside metastore_url (of a metastore that is down, which
    fails fast, naming its address). dbt debug on each, a failing dbt run over TLS: neither
    their output nor any file under the project (dbt.log, run_results.json, the manifest, the
    embedded JVM's log), nor the server's log, holds one."""
    project = tmp_path_factory.mktemp("secrets")
    (project / "dbt_project.yml").write_text("name: secrets\nversion: '1.0'\nprofile: secrets\n")
    (project / "models").mkdir()
    (project / "models" / "broken.sql").write_text(SECRETS_MODEL)
    token, url_password, key_password = spark_cluster["token"], "url-pw-41xq", "key-pw-93zr"
    metastore = f"jdbc:derby://localhost:{spark_cluster['ports']['derby']}/secrets_db;create=true"
    nobody = f"localhost:{cluster.free_port()}"
    down = f"jdbc:derby://{nobody}/gone;user=app;password={url_password}"
    targets = {
        "tls": {
            "method": "connect", "host": spark_cluster["tls_host"],
            "token": "{{ env_var('SPARK_CONNECT_TOKEN') }}", "ca_cert": spark_cluster["ca_cert"],
        },
        "token_in_host": {"method": "connect", "host": f"{spark_cluster['host']}/;token={token}"},
        "embedded": {
            "metastore_url": metastore, "metastore_user": "app",
            "metastore_password": "{{ env_var('METASTORE_PASSWORD') }}",
            "metastore_driver_jar": str(cluster.DERBY_CLIENT),
        },
        "metastore_down": {"metastore_url": down, "connect_timeout": 3},
        "nobody_answers": {"method": "connect", "host": f"sc://{nobody}/;token={token}",
                           "connect_timeout": 2, "connect_retries": 1},
    }  # fmt: skip
    outputs = {name: {"type": "spark_streams", "schema": "secrets", "threads": 2, **keys}
               for name, keys in targets.items()}  # fmt: skip
    (project / "profiles.yml").write_text(
        yaml.safe_dump({"secrets": {"target": "tls", "outputs": outputs}})
    )
    env = {"SPARK_CONNECT_TOKEN": token, "METASTORE_PASSWORD": key_password}
    printed = {}
    for target in targets:
        debug = run_dbt_process(project, "debug", "--target", target, env=env)
        printed[target] = debug.stdout + debug.stderr
        failing = target in ("metastore_down", "nobody_answers")
        assert (debug.returncode == 0) != failing, printed[target]
    assert "token=*****" in printed["token_in_host"]
    assert "password=*****" in printed["metastore_down"]
    assert nobody in printed["metastore_down"]
    began = time.monotonic()
    unanswered = run_dbt_process(project, "run", "--target", "nobody_answers", env=env)
    took = time.monotonic() - began  # dbt's own start included; it used to wait 120 s and more
    assert unanswered.returncode != 0 and took < 60, (took, unanswered.stdout)
    said = f"No Spark Connect server answered at sc://{nobody}/;token=***** within 2 s (2 attempts"
    assert said in printed["nobody_answers"] and said in unanswered.stdout, unanswered.stdout
    printed["unanswered"] = unanswered.stdout + unanswered.stderr
    failed = run_dbt_process(project, "run", env=env)
    assert failed.returncode != 0 and "no_such_table_here" in failed.stdout, failed.stdout
    printed["run"] = failed.stdout + failed.stderr

    # Every file the runs wrote (profiles.yml is the input: it holds the token in host).
    written = [
        path for path in project.rglob("*") if path.is_file() and path.name != "profiles.yml"
    ]
    assert any(path.name == "spark-jvm.log" for path in written), written
    server_log = Path(spark_cluster["home"]) / "connect.log"
    texts = [*printed.values()] + [path.read_text(errors="replace") for path in written]
    texts.append(server_log.read_text(errors="replace"))
    for secret in (token, url_password, key_password):
        leaks = [text[max(0, text.find(secret) - 200) :][:400] for text in texts if secret in text]
        assert not leaks, (secret, leaks)
