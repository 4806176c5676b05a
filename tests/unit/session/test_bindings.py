"""A seed's cells become Spark literals that keep their value (session/bindings.py)."""

import datetime as dt
from decimal import Decimal

import pytest

from dbt.adapters.spark_streams.session.bindings import spark_literal


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (Decimal("12345678901234567890"), "12345678901234567890"),
        (Decimal("1E+2"), "100"),
        (Decimal("-0.25"), "-0.25"),
        (7, "7"),
        (1.5, "1.5"),
        ("O'Brien", "'O\\'Brien'"),
        ("back\\slash", "'back\\\\slash'"),
        ("%s and %d", "'%s and %d'"),
        (dt.date(2024, 2, 29), "'2024-02-29'"),
        (dt.datetime(2024, 2, 29, 13, 5, 7, 120000), "'2024-02-29 13:05:07.120000'"),
    ],
)
def test_each_value_becomes_a_literal_of_itself(value: object, literal: str) -> None:
    assert spark_literal(value) == literal
