"""Whether a model passes a stream's column through unchanged (its outer select reads the
stream's subquery only, joins and groups nothing, outputs the column as `*` or by name)."""

import pytest

from dbt.adapters.spark_streams.streams.builds.pass_through import passes_through

STREAM = "(select 1 as customer_id, 2 as id, 'INSERT' as metadata_action)"


@pytest.mark.parametrize(
    "model",
    [
        f"select * from {STREAM}",
        f"select * from {STREAM} as s where metadata_action = 'INSERT';",
        f"select id, customer_id from {STREAM} s",
        f"select s.customer_id as customer_id from {STREAM} s",
        f"select id, CUSTOMER_ID from {STREAM}",
        # Spark's quoting, and a stream whose own SQL joins and groups (a view stream's)
        "select `customer_id` from (select `customer_id` from `shop`.`orders`) s;",
        "select customer_id from (select o.customer_id, count(*) as n from orders o "
        "join customers c on o.customer_id = c.id group by o.customer_id)",
    ],
)
def test_the_column_passes_through(model: str) -> None:
    assert passes_through(model, "customer_id")


@pytest.mark.parametrize(
    "model",
    [
        f"select customer_id + 1 as customer_id from {STREAM}",
        f"select id as customer_id from {STREAM}",
        f"select * except (customer_id) from {STREAM}",
        f"select * replace (customer_id + 1 as customer_id) from {STREAM}",
        f"select * from {STREAM} s join other o on s.id = o.id",
        f"select customer_id, count(*) from {STREAM} group by customer_id",
        f"select distinct customer_id from {STREAM}",
        f"select * from {STREAM} union all select * from {STREAM}",
        "select customer_id from some_table",
        "select id from (select 1 as id)",
        "not sql at all (",
    ],
)
def test_anything_else_does_not(model: str) -> None:
    assert not passes_through(model, "customer_id")
