"""Secrets in profile values (no JVM): masked in every URL form a profile takes, taken out of a
metastore's JDBC URL, and scrubbed from error texts wherever they sit."""

import pytest

from dbt.adapters.spark_streams.redaction import (
    MASK,
    JdbcLogin,
    holds_secret,
    jdbc_login,
    masked,
    scrubbed,
    secrets_in,
)

TOKEN = "tok-9f8e7d6c"
PASSWORD = "s3cr3t;pw"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (f"sc://spark.example.com:443/;token={TOKEN};use_ssl=true",
         f"sc://spark.example.com:443/;token={MASK};use_ssl=true"),
        (f"sc://h:15002/;use_ssl=true;TOKEN={TOKEN}", f"sc://h:15002/;use_ssl=true;TOKEN={MASK}"),
        ("jdbc:derby://db:1527/ms;user=app;password=hunter22;create=true",
         f"jdbc:derby://db:1527/ms;user=app;password={MASK};create=true"),
        ("jdbc:postgresql://db/ms?user=app&password=hunter22&ssl=true",
         f"jdbc:postgresql://db/ms?user=app&password={MASK}&ssl=true"),
        ("jdbc:mysql://app:hunter22@db:3306/ms", f"jdbc:mysql://app:{MASK}@db:3306/ms"),
        ("sc://localhost:15002", "sc://localhost:15002"),
        ("jdbc:derby://localhost:1527/metastore_db;create=true",
         "jdbc:derby://localhost:1527/metastore_db;create=true"),
    ],
)  # fmt: skip
def test_every_url_form_is_printed_with_its_secret_masked(value: str, shown: str) -> None:
    assert masked(value) == shown
    assert masked(shown) == shown
    assert all(secret not in shown for secret in secrets_in(value))


def test_the_secrets_a_value_carries() -> None:
    assert secrets_in(f"sc://h/;token={TOKEN};use_ssl=true") == [TOKEN]
    assert secrets_in("jdbc:mysql://app:hunter22@db/ms?password=other1") == ["other1", "hunter22"]
    assert secrets_in("sc://h:15002") == [] and secrets_in(None) == []


def test_an_error_loses_every_secret_it_quotes() -> None:
    error = (
        "Could not connect: <_InactiveRpcError ... metadata=(('authorization', "
        f"'Bearer {TOKEN}'),) url=sc://h/;token={TOKEN}> and the password {PASSWORD} was refused"
    )
    clean = scrubbed(error, [TOKEN, PASSWORD, None, "ab"])
    assert TOKEN not in clean and PASSWORD not in clean
    assert clean.count(MASK) == 3 and "was refused" in clean


@pytest.mark.parametrize(
    ("url", "login"),
    [
        ("jdbc:derby://db:1527/ms;user=app;password=hunter22;create=true",
         JdbcLogin("jdbc:derby://db:1527/ms;create=true", "app", "hunter22")),
        ("jdbc:postgresql://db/ms?user=app&password=hunter22&ssl=true",
         JdbcLogin("jdbc:postgresql://db/ms?ssl=true", "app", "hunter22")),
        ("jdbc:postgresql://db/ms?password=hunter22",
         JdbcLogin("jdbc:postgresql://db/ms", None, "hunter22")),
        ("jdbc:mysql://app:hunter22@db:3306/ms",
         JdbcLogin("jdbc:mysql://db:3306/ms", "app", "hunter22")),
        ("jdbc:derby://db:1527/ms;create=true", JdbcLogin("jdbc:derby://db:1527/ms;create=true")),
    ],
)  # fmt: skip
def test_a_metastore_url_gives_up_its_login(url: str, login: JdbcLogin) -> None:
    assert jdbc_login(url) == login


@pytest.mark.parametrize(
    ("key", "value", "secret"),
    [
        ("spark.hadoop.fs.s3a.secret.key", "hidden-value", True),
        ("spark.hadoop.fs.azure.sas.fixed.token", "sv=2024&sig=abc", True),
        ("spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net", "c2VjcmV0", True),
        ("spark.hadoop.metastore.password", "Org.Apache.Secret", True),  # not a class's name
        ("spark.hadoop.metastore.password", "12345678", True),
        ("spark.hadoop.fs.azure.enable.delegation.token", "True", False),
        (
            "spark.hadoop.fs.azure.sas.token.provider.type",
            "org.apache.hadoop.fs.azurebfs.sas.FixedSASTokenProvider",
            False,
        ),
        ("spark.hadoop.fs.s3a.delegation.token.binding", "org.example.auth.Binding$Inner", False),
        ("spark.sql.shuffle.partitions", "7", False),
    ],
)
def test_a_setting_under_a_secret_looking_key_is_not_a_secret(
    key: str, value: str, secret: bool
) -> None:
    assert holds_secret(key, value) is secret
