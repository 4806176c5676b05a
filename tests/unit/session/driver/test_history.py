"""Which statements the driver's history read takes (session/driver/history.py), without a JVM: the
cursor matches every statement it runs against PLAIN_HISTORY, so the pattern must take exactly
the plain form and give up on anything else at once."""

import pytest

from dbt.adapters.spark_streams.session.driver.history import (
    PLAIN_HISTORY,
    history_frame,
    name_parts,
)


@pytest.mark.parametrize(
    ("sql", "name", "limit"),
    [
        ("describe history shop.orders", "shop.orders", None),
        ("DESCRIBE HISTORY `shop`.`orders` LIMIT 20", "`shop`.`orders`", "20"),
        ('/* {"app": "dbt"} */\ndescribe history orders limit 1', "orders", "1"),
        (
            'describe history spark_catalog.shop.orders limit 8\n/* {"app": "dbt"} */;',
            "spark_catalog.shop.orders",
            "8",
        ),
    ],
)
def test_the_plain_form_is_taken(sql: str, name: str, limit: str | None) -> None:
    match = PLAIN_HISTORY.fullmatch(sql)
    assert match is not None
    assert match["name"] == name and match["limit"] == limit


@pytest.mark.parametrize(
    "sql",
    [
        "describe history shop.orders -- a line comment",
        "describe history delta.`/data/orders`x",
        "describe history 'shop.orders'",
        "describe history a.b.c.d",
        "describe history shop.orders limit 10000000000",
        "describe detail shop.orders",
        "select * from (describe history shop.orders)",
        "/* one */ /* two */ " * 40 + "select 1 " * 1000,
    ],
)
def test_anything_else_is_left_to_spark(sql: str) -> None:
    assert PLAIN_HISTORY.fullmatch(sql) is None


def test_names_lose_their_backquotes() -> None:
    assert name_parts("`shop`.`my.orders`") == ["shop", "my.orders"]
    assert name_parts("spark_catalog.shop.orders") == ["spark_catalog", "shop", "orders"]


def test_a_session_without_a_jvm_is_left_to_spark() -> None:
    class ConnectLike:
        """Spark Connect's session has neither `_jsparkSession` nor `_jvm`."""

    assert history_frame(ConnectLike(), "describe history shop.orders") is None  # type: ignore[arg-type]
