"""A `thrift` profile's server_side_parameters reach the server's session (`make test-thrift`):
each plain key is SET as the session opens (the server passes on only `set:hiveconf:` keys of
the opening configuration), dbt-spark's `spark.sql.ansi.enabled` among them; a key the server
refuses fails the run with a sentence naming it; a secret is left out with a warning and its
value is printed nowhere, and a class's name under a secret-looking key is SET."""

import json
import os
import re
from pathlib import Path

import pytest

from dbt.adapters.spark_streams.credentials import ALL_FILES_IN_CRC
from tests.conftest import THRIFT_ENV, thrift_target
from tests.integration.dbt_process import run_dbt_process

pytestmark = pytest.mark.skipif(
    not os.environ.get(THRIFT_ENV), reason="needs `make test-thrift` (scripts/with_thrift.py)"
)

PROJECT = """name: confs
version: "1.0"
profile: confs
"""
MACRO = """{% macro show_confs(keys) %}
  {% for key in keys %}
    {% set row = run_query("set " ~ key).rows[0] %}
    {% do log("conf " ~ row[0] ~ " = " ~ row[1], info=True) %}
  {% endfor %}
{% endmacro %}
"""
SECRET = "not-a-real-secret-4711"
# A setting under a secret-looking name: SET, since its value is a class's name
PROVIDER = "spark.hadoop.fs.azure.sas.token.provider.type"
PROVIDER_CLASS = "org.apache.hadoop.fs.azurebfs.sas.FixedSASTokenProvider"
KEYS = ["spark.sql.shuffle.partitions", "spark.sql.ansi.enabled", ALL_FILES_IN_CRC]


def project_with(tmp_path: Path, parameters: dict[str, str]) -> Path:
    """A project of one macro whose profile reaches the shared server with `parameters`."""
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "show_confs.sql").write_text(MACRO)
    (tmp_path / "dbt_project.yml").write_text(PROJECT)
    output = thrift_target(Path(os.environ[THRIFT_ENV]))
    output |= {"schema": "confs", "server_side_parameters": parameters}
    profile = {"confs": {"target": "dev", "outputs": {"dev": output}}}
    (tmp_path / "profiles.yml").write_text(json.dumps(profile))
    return tmp_path


def shown(stdout: str) -> dict[str, str]:
    return dict(re.findall(r"conf (\S+) = (\S*)", stdout))


def test_parameters_reach_the_session_and_a_secret_stays_out(tmp_path: Path) -> None:
    project = project_with(
        tmp_path,
        {
            "spark.sql.shuffle.partitions": "7",
            "spark.hadoop.fs.s3a.secret.key": SECRET,
            PROVIDER: PROVIDER_CLASS,
        },
    )
    run = run_dbt_process(
        project, "run-operation", "show_confs", "--args", json.dumps({"keys": [*KEYS, PROVIDER]})
    )
    assert run.returncode == 0, run.stdout
    assert shown(run.stdout) == {
        "spark.sql.shuffle.partitions": "7",
        "spark.sql.ansi.enabled": "false",  # dbt-spark's, for every method
        ALL_FILES_IN_CRC: "false",
        PROVIDER: "*********(redacted)",  # Spark's SET hides it; an unset key: <undefined>
    }
    assert f"{PROVIDER} holds" not in run.stdout
    assert "spark.hadoop.fs.s3a.secret.key holds a secret and is not SET" in run.stdout
    logs = "".join(path.read_text() for path in (project / "logs").glob("*.log"))
    assert SECRET not in run.stdout and SECRET not in logs


def test_a_key_the_server_refuses_fails_with_a_sentence(tmp_path: Path) -> None:
    project = project_with(tmp_path, {"spark.sql.warehouse.dir": "/elsewhere"})
    run = run_dbt_process(
        project, "run-operation", "show_confs", "--args", json.dumps({"keys": KEYS})
    )
    assert run.returncode != 0
    assert "refused server_side_parameters' spark.sql.warehouse.dir for the session" in run.stdout
    assert "give this one to the server as it starts" in run.stdout
    assert 'Cannot modify the value of the static Spark config: "spark.sql.warehouse.dir"' in (
        run.stdout
    )
    assert "infoMessages" not in run.stdout  # the server's message, not its whole response
    assert "conf spark.sql" not in run.stdout and "Traceback" not in run.stdout
