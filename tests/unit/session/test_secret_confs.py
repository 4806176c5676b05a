"""The metastore's password reaches spark-submit in a private file, never on its command line."""

import os
import shlex
import stat
from pathlib import Path

import pytest

from dbt.adapters.spark_streams.session.secret_confs import (
    SUBMIT_ARGS,
    properties_line,
    secrets_off_the_command_line,
)

PASSWORD_KEY = "spark.hadoop.javax.jdo.option.ConnectionPassword"
URL_KEY = "spark.hadoop.javax.jdo.option.ConnectionURL"


def test_password_goes_to_a_private_properties_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SUBMIT_ARGS, raising=False)
    confs = {URL_KEY: "jdbc:derby://db:1527/m", PASSWORD_KEY: "s3cret=x"}
    with secrets_off_the_command_line(confs) as public:
        assert public == {URL_KEY: "jdbc:derby://db:1527/m"}
        args = shlex.split(os.environ[SUBMIT_ARGS])
        assert args[0] == "--properties-file" and args[-1] == "pyspark-shell"
        path = Path(args[1])
        assert path.read_text() == f"{PASSWORD_KEY}=s3cret=x\n"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert SUBMIT_ARGS not in os.environ
    assert not path.exists()


def test_the_users_submit_args_are_kept_and_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SUBMIT_ARGS, "--driver-memory 2g pyspark-shell")
    with secrets_off_the_command_line({PASSWORD_KEY: "p"}):
        assert os.environ[SUBMIT_ARGS].endswith(" --driver-memory 2g pyspark-shell")
    assert os.environ[SUBMIT_ARGS] == "--driver-memory 2g pyspark-shell"


def test_without_a_secret_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SUBMIT_ARGS, raising=False)
    with secrets_off_the_command_line({URL_KEY: "u"}) as public:
        assert public == {URL_KEY: "u"}
        assert SUBMIT_ARGS not in os.environ


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("plain", "plain"),
        ("back\\slash", "back\\\\slash"),
        (" leading", "\\ leading"),
        ("two\nlines", "two\\nlines"),
        ("pässwörd", "p\\u00e4ssw\\u00f6rd"),
        ("#!=:;'\"`", "#!=:;'\"`"),
    ],
)
def test_values_are_escaped_as_java_properties_reads_them(value: str, written: str) -> None:
    assert properties_line("k", value) == f"k={written}\n"
