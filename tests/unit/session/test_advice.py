"""Spark's and Delta's advice that would lose data is left out of every message a user reads
(no JVM: the messages are Spark's own templates, read from the installed pyspark's jar, and
Delta 4.4's, captured in data/delta_error_advice.json; the functional test_delta_errors.py
holds that capture against the running Delta)."""

import json
import re
import zipfile
from pathlib import Path

import pyspark
import pytest
from pyspark.errors import PySparkException

from dbt.adapters.spark_streams.session.advice import (
    HARMFUL,
    KEEP_THE_DATA,
    SENTENCE_END,
    without_harmful_advice,
)
from dbt.adapters.spark_streams.session.errors import spark_error_message

DELTA_ADVICE = Path(__file__).parent / "data" / "delta_error_advice.json"
PLACEHOLDER = re.compile(r"<(\w+)>")
# Spark's classes whose advice a pipeline could follow into lost data: each must lose it.
SPARK_MUST_LOSE = {
    "CAST_OVERFLOW_IN_TABLE_INSERT",
    "CAST_OVERFLOW",
    "CAST_INVALID_INPUT",
    "ARITHMETIC_OVERFLOW",
    "DIVIDE_BY_ZERO",
    "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION",
    "DATETIME_FIELD_OUT_OF_BOUNDS.WITH_SUGGESTION",
    "INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER",
}
# Placeholders Spark fills with sentences of its own (ARITHMETIC_OVERFLOW's, say).
TEXTS = {
    "message": "integer overflow",
    "rangeMessage": "Invalid value for MonthOfYear: 13",
    "alternative": " Use `try_add` to tolerate overflow and return NULL instead.",
}
DELTA_MUST_LOSE = {"DELTA_CAST_OVERFLOW_IN_TABLE_WRITE", "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"}


def spark_templates() -> dict[str, list[str]]:
    """Every error class of the installed Spark, sub-classes as CLASS.SUB, with its message."""
    jar = next((Path(pyspark.__file__).parent / "jars").glob("spark-common-utils_*.jar"))
    with zipfile.ZipFile(jar) as archive:
        classes = json.loads(archive.read("error/error-conditions.json"))
    found: dict[str, list[str]] = {}

    def walk(name: str, node: dict, parent: list[str]) -> None:
        found[name] = [*parent, *node.get("message", [])]  # a sub-class's follows its class's
        for sub, child in node.get("subClass", {}).items():
            walk(f"{name}.{sub}", child, found[name])

    for name, node in classes.items():
        walk(name, node, [])
    return found


def rendered(error_class: str, lines: list[str]) -> str:
    """The message as Spark renders it: its class first, values for the placeholders (conf
    names for the ones that name a conf), the SQLSTATE last."""

    def value(found: re.Match) -> str:
        name = found[1]
        if name in TEXTS:
            return TEXTS[name]
        return f'"spark.sql.example.{name}"' if re.search("conf|flag|key", name, re.I) else "`v`"

    body = PLACEHOLDER.sub(value, "\n".join(lines))
    return f"[{error_class}] {body} SQLSTATE: 22003"


def advice_in(lines: list[str]) -> bool:
    """Whether a message, rendered, advises losing data after its first sentence."""
    sentences = SENTENCE_END.split(rendered("CLASS", lines))[0::2]
    return any(HARMFUL.search(sentence) for sentence in sentences[1:])


def assert_advice_left_out(error_class: str, lines: list[str]) -> None:
    message = rendered(error_class, lines)
    shown = without_harmful_advice(message)
    first, _, rest = shown.partition(KEEP_THE_DATA)
    kept = SENTENCE_END.split(first)[0::2]
    assert not any(HARMFUL.search(sentence) for sentence in kept[1:]), (error_class, shown)
    assert KEEP_THE_DATA in shown and rest == " SQLSTATE: 22003", shown
    assert shown.startswith(f"[{error_class}] "), shown


def test_sparks_advice_is_left_out_of_every_class_that_gives_it() -> None:
    templates = spark_templates()
    with_advice = {name for name, lines in templates.items() if advice_in(lines)}
    # Spark 4.0 gives some advice in the class that later versions moved to a sub-class
    missing = {n for n in SPARK_MUST_LOSE if not {n, n.split(".")[0]} & with_advice}
    assert not missing
    for name in sorted(with_advice):
        assert_advice_left_out(name, templates[name])


def test_deltas_advice_is_left_out_of_every_class_that_gives_it() -> None:
    classes = json.loads(DELTA_ADVICE.read_text())["classes"]
    assert set(classes) >= DELTA_MUST_LOSE
    for name, lines in sorted(classes.items()):
        assert advice_in(lines), name
        assert_advice_left_out(name, lines)


def test_the_widening_overflow_as_a_user_met_it() -> None:
    delta = (
        '[DELTA_CAST_OVERFLOW_IN_TABLE_WRITE] Failed to write a value of "BIGINT" type into the '
        '"INT" type column `v` due to an overflow.\n    Use `try_cast` on the input value to '
        "tolerate overflow and return NULL instead.\n    If necessary, set "
        'spark.sql.storeAssignmentPolicy to "LEGACY" to bypass this error or set '
        "spark.databricks.delta.updateAndMergeCastingFollowsAnsiEnabledFlag to true to revert "
        "to the old behaviour and follow spark.sql.ansi.enabled in UPDATE and MERGE. "
        "SQLSTATE: 22003"
    )
    shown = spark_error_message(PySparkException(delta))
    assert shown is not None
    assert shown.startswith("[DELTA_CAST_OVERFLOW_IN_TABLE_WRITE] Failed to write a value of")
    for advice in ("try_cast", "storeAssignmentPolicy", "LEGACY", "ansi.enabled"):
        assert advice not in shown
    assert "--full-refresh" in shown and "ALTER TABLE" in shown


@pytest.mark.parametrize(
    "message",
    [
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `x` cannot be found. Verify the spelling.",
        "[DELTA_DATA_CHANGE_FALSE] Cannot change table metadata because the 'dataChange' "
        "option is set to false. Attempted operation: 'x'.",
        "[INSERT_REPLACE_ON_NOT_ENABLED] Not enabled. Set 'spark.sql.insertIntoReplaceOn."
        "enabled' to true to enable it.",
    ],
)
def test_a_message_without_such_advice_is_passed_on_as_it_came(message: str) -> None:
    assert without_harmful_advice(message) == message
