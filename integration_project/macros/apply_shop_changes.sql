{#-
  A batch of source changes for the demo: new customers and orders, updates and deletes
  (customer 1 moves twice, in two commits, which the customers_history model keeps), a new
  file of two order events in the landing folder, and a file of the customers' changes as
  Debezium envelopes (customer 1's second move written before its first: the sequence, not
  the order in the file, decides).
    dbt run-operation apply_shop_changes
-#}
{% macro apply_shop_changes() %}
  {% set next_id = run_query("select coalesce(max(customer_id), 0) + 1 from shop_raw.customers").columns[0].values()[0] %}
  {% set next_order = run_query("select coalesce(max(order_id), 0) + 1 from shop_raw.orders").columns[0].values()[0] %}
  {#- the feed's file first: it reads the rows before the changes (customer 2's, to delete) -#}
  {% set one = "(select * from shop_raw.customers where customer_id = 1)" %}
  {% set events = [
    "select cast(null as " ~ cdc_row_type() ~ "), named_struct('customer_id', " ~ next_id ~ "L, 'name', 'new customer', 'email', 'new@shop.example', 'country', 'JP'), 'c', 1",
    "select " ~ cdc_row("'FR'") ~ ", " ~ cdc_row("'DE'") ~ ", 'u', 3 from " ~ one,
    "select " ~ cdc_row() ~ ", " ~ cdc_row("'FR'") ~ ", 'u', 2 from " ~ one,
    "select " ~ cdc_row() ~ ", null, 'd', 4 from shop_raw.customers where customer_id = 2",
  ] %}
  {% do run_query("insert into shop_raw.customer_cdc
    select e.before, e.after, e.op, unix_millis(current_timestamp()), named_struct('lsn', b.lsn + e.n)
    from (" ~ events | join(' union all ') ~ ") as e(before, after, op, n)
    cross join (select max(source.lsn) as lsn from shop_raw.customer_cdc) as b") %}
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
  {{ log("applied " ~ statements | length ~ " changes to shop_raw, and their " ~ events | length ~ " change events to its feed", info=true) }}
{% endmacro %}
