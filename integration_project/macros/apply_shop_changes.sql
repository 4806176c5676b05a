{#-
  A batch of source changes for the demo: new customers and orders, updates and deletes
  (customer 1 moves twice, in two commits, which the customers_history model keeps), and a
  new file of two order events in the landing folder.
    dbt run-operation apply_shop_changes
-#}
{% macro apply_shop_changes() %}
  {% set next_id = run_query("select coalesce(max(customer_id), 0) + 1 from shop_raw.customers").columns[0].values()[0] %}
  {% set next_order = run_query("select coalesce(max(order_id), 0) + 1 from shop_raw.orders").columns[0].values()[0] %}
  {% set statements = [
    "insert into shop_raw.customers values (" ~ next_id ~ ", 'new customer', 'new@shop.example', 'JP', current_timestamp())",
    "update shop_raw.customers set country = 'FR', updated_at = current_timestamp() where customer_id = 1",
    "update shop_raw.customers set country = 'DE', updated_at = current_timestamp() where customer_id = 1",
    "delete from shop_raw.customers where customer_id = 2",
    "insert into shop_raw.orders values (" ~ next_order ~ ", 1, 'placed', current_timestamp(), current_timestamp())",
    "update shop_raw.orders set status = 'cancelled', updated_at = current_timestamp() where order_id = 3",
    "insert into shop_raw.order_events values (" ~ next_order ~ ", 'placed', current_timestamp()), (3, 'cancelled', current_timestamp())",
  ] %}
  {% for statement in statements %}
    {% do run_query(statement) %}
  {% endfor %}
  {{ log("applied " ~ statements | length ~ " changes to shop_raw", info=true) }}
{% endmacro %}
