"""Which statements the driver's DESCRIBE DETAIL takes (session/driver/detail.py), without a
JVM: the cursor matches every statement it runs against PLAIN_DETAIL, so the pattern must take
exactly the plain form."""

import pytest

from dbt.adapters.spark_streams.session.driver.detail import PLAIN_DETAIL, detail_frame


@pytest.mark.parametrize(
    ("sql", "name"),
    [
        ("describe detail shop.orders", "shop.orders"),
        ("DESCRIBE DETAIL `shop`.`orders`;", "`shop`.`orders`"),
        ('/* {"app": "dbt"} */\ndescribe detail spark_catalog.shop.o', "spark_catalog.shop.o"),
        ('describe detail orders\n/* {"app": "dbt"} */', "orders"),
    ],
)
def test_the_plain_form_is_taken(sql: str, name: str) -> None:
    match = PLAIN_DETAIL.fullmatch(sql)
    assert match is not None and match["name"] == name


@pytest.mark.parametrize(
    "sql",
    [
        "describe detail shop.orders -- a line comment",
        "describe detail delta.`/data/orders`x",
        "describe detail '/data/orders'",
        "describe detail a.b.c.d",
        "describe history shop.orders",
        "describe shop.orders",
        "select * from (describe detail shop.orders)",
    ],
)
def test_anything_else_is_left_to_spark(sql: str) -> None:
    assert PLAIN_DETAIL.fullmatch(sql) is None


def test_a_session_without_a_jvm_is_left_to_spark() -> None:
    class ConnectLike:
        """Spark Connect's session has neither `_jsparkSession` nor `_jvm`."""

    assert detail_frame(ConnectLike(), "describe detail shop.orders") is None  # type: ignore[arg-type]
