"""Secrets in profile values: found, taken out of the URLs that carry them, and masked wherever
the adapter prints a value.

A Spark Connect URL may carry a bearer token (`sc://host:443/;token=...;use_ssl=true`, the
form Spark documents) and a metastore's JDBC URL a password (`jdbc:derby://h:1527/db;user=app;
password=...`, `jdbc:postgresql://h/db?password=...`, `jdbc:mysql://user:pass@h/db`). dbt
prints a profile's connection values (`dbt debug`, and its log file), and errors quote them:
every such value goes through `masked` first, and every error text through `scrubbed`, which
also removes the secrets given in their own keys (`token`, `metastore_password`).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

MASK = "*****"
# Connection-string parameters whose value is a secret, in any letter case.
SECRET_KEYS = ("token", "password", "passwd", "pwd", "secret", "access_token", "accesstoken")
SECRET_PARAMETER = re.compile(
    r"(?P<key>(?:^|[;?&])\s*(?:" + "|".join(SECRET_KEYS) + r")\s*=)(?P<value>[^;&\s'\"<>()]*)",
    re.IGNORECASE,
)
# `scheme://user:password@host`: the password of a URL's user information.
USER_INFO = re.compile(r"(?P<head>//[^/@:;?&\s'\"]+:)(?P<value>[^/@\s'\"]+)(?P<tail>@)")
# The parameters of a JDBC URL that name its user and password.
USER_KEYS = ("user", "username")
PASSWORD_KEYS = ("password", "passwd", "pwd")
SHORTEST_SECRET = 4  # a shorter "secret" would mask unrelated text
# Values that are never secrets, whatever their key's name says (ABFS's switch
# fs.azure.enable.delegation.token): masking them would mask every true or false in a text.
SWITCHES = ("true", "false")
# A Java class's whole name (fs.azure.sas.token.provider.type's
# org.apache.hadoop.fs.azurebfs.sas.FixedSASTokenProvider): a setting, not a secret.
JAVA_CLASS = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+\.[A-Z][A-Za-z0-9_$]*$")
# Spark confs whose value is a secret: any key Spark's own spark.redaction.regex redacts
# (`(?i)secret|password|token|access[.]?key`) but S3A's access key, which names the key and is
# not one (the metastore's password, S3A's secret key and session token, also per bucket,
# ABFS's OAuth client secret and SAS token, a keystore's password), and the keys that hold a
# key: the ABFS and GCS account keys, S3A's encryption key (SSE-C).
SECRET_CONF = re.compile(
    r"(?i)secret|password|token"
    r"|fs\.azure\.account\.key\.|fs\.gs\.auth\.service\.account\.private\.key"
    r"|fs\.s3a\.(?:bucket\.[^.]+\.)?(?:encryption|server-side-encryption)\.key"
)


def is_secret_conf(key: str) -> bool:
    """Whether a Spark conf's value is a secret (never on a command line, never printed)."""
    return bool(SECRET_CONF.search(key))


def holds_secret(key: str, value: object) -> bool:
    """Whether a Spark conf of `key` set to `value` holds a secret: a secret conf's value that
    is not plainly a setting (a switch, a class's name) under a secret-looking name."""
    if not is_secret_conf(key):
        return False
    text = str(value).strip()
    return not (text.lower() in SWITCHES or JAVA_CLASS.match(text))


def masked(value: str | None) -> str | None:
    """`value` with the secret parameters and user-information passwords of any URL in it
    replaced by MASK."""
    if value is None:
        return None
    value = SECRET_PARAMETER.sub(lambda m: m.group("key") + MASK, value)
    return USER_INFO.sub(lambda m: m.group("head") + MASK + m.group("tail"), value)


def secrets_in(value: str | None) -> list[str]:
    """The secret values `value` carries (token and password parameters, a URL's password)."""
    if not value:
        return []
    found = [m.group("value").strip() for m in SECRET_PARAMETER.finditer(value)]
    found += [m.group("value") for m in USER_INFO.finditer(value)]
    return [secret for secret in found if secret and secret != MASK]


def scrubbed(text: str, secrets: Iterable[str | None]) -> str:
    """`text` (an error, a log line) with every secret in it replaced by MASK, and any URL in it
    masked: the secrets are the profile's, wherever they sit in the text."""
    kept = {s for s in secrets if s and len(s) >= SHORTEST_SECRET and s.lower() not in SWITCHES}
    for secret in sorted(kept, key=len)[::-1]:
        text = text.replace(secret, MASK)
    return masked(text) or ""


@dataclass(frozen=True)
class JdbcLogin:
    """A JDBC URL with its user and password taken out, and the two taken out (None when the
    URL did not carry them)."""

    url: str
    user: str | None = None
    password: str | None = None


def jdbc_login(url: str) -> JdbcLogin:
    """The URL without its user and password, which the metastore then gets as connection
    properties (Spark redacts those wherever it prints its confs; a URL it prints whole)."""
    user = password = None
    info = USER_INFO.search(url)
    if info:
        login = url[info.start() + 2 : info.end() - 1]
        user, password = login.split(":", 1)
        url = url[: info.start() + 2] + url[info.end() :]
    kept = []
    for part in re.split(r"([;?&])", url):
        key, _, value = part.partition("=")
        name = key.strip().lower()
        if value and name in USER_KEYS:
            user = value
        elif value and name in PASSWORD_KEYS:
            password = value
        else:
            kept.append(part)
    return JdbcLogin(_rejoined(kept), user, password)


def _rejoined(parts: list[str]) -> str:
    """The URL's parts joined again, without separators left standing next to each other or at
    the end (`db;;create=true`, `db?&x=1`, `db;`)."""
    text = "".join(parts)
    text = re.sub(r"([;&])[;&]+", r"\1", text)
    text = re.sub(r"\?[;&]+", "?", text)
    return re.sub(r"[;?&]+$", "", text)
