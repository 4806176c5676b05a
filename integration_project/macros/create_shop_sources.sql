{#
  Creates the shop's raw Delta tables (customers, orders, order_items) in schema `shop_raw`
  with deterministic generated rows, `order_events`, a table over a folder of JSON files, and
  `customer_cdc`, the customers' change feed as Debezium writes it (JSON files of envelopes: the
  row before and after, the op, ts_ms, the source's lsn), starting with a snapshot. Run with:
    dbt run-operation create_shop_sources --args '{customers: 50}'
  Existing tables are left as they are, so re-running is harmless.
#}
{% macro create_shop_sources(customers=50, orders_per_customer=3, items_per_order=2) %}
  {% set n_orders = customers * orders_per_customer %}
  {% set statements = [
    "create schema if not exists shop_raw",
    "create table if not exists shop_raw.customers (
       customer_id bigint, name string, email string, country string, updated_at timestamp
     ) using delta tblproperties (delta.enableChangeDataFeed = true)",
    "create table if not exists shop_raw.orders (
       order_id bigint, customer_id bigint, status string, ordered_at timestamp,
       updated_at timestamp
     ) using delta tblproperties (delta.enableChangeDataFeed = true)",
    "create table if not exists shop_raw.order_items (
       order_id bigint, line_no int, sku string, quantity int, unit_price decimal(10, 2)
     ) using delta tblproperties (delta.enableChangeDataFeed = true)",
    "create table if not exists shop_raw.order_events (
       order_id bigint, event string, occurred_at timestamp
     ) using json",
    "create table if not exists shop_raw.customer_cdc (
       before " ~ cdc_row_type() ~ ", after " ~ cdc_row_type() ~ ",
       op string, ts_ms bigint, source struct<lsn: bigint>
     ) using json",
  ] %}
  {% for statement in statements %}
    {% do run_query(statement) %}
  {% endfor %}

  {% set existing = run_query("select count(*) from shop_raw.customers").columns[0].values()[0] %}
  {% if existing > 0 %}
    {{ log("shop_raw already holds " ~ existing ~ " customers; left as is", info=true) }}
  {% else %}
    {% do run_query("insert into shop_raw.customers
      select id, concat('customer ', id), concat('c', id, '@shop.example'),
             element_at(array('DE', 'JP', 'FR', 'US'), cast(id % 4 + 1 as int)),
             timestamp'2026-01-01 00:00:00' + make_interval(0, 0, 0, cast(id as int))
      from range(1, " ~ (customers + 1) ~ ") as r(id)") %}
    {% do run_query("insert into shop_raw.orders
      select id, (id - 1) % " ~ customers ~ " + 1,
             element_at(array('placed', 'shipped', 'delivered'), cast(id % 3 + 1 as int)),
             timestamp'2026-02-01 00:00:00' + make_interval(0, 0, 0, 0, cast(id as int)),
             timestamp'2026-02-01 00:00:00' + make_interval(0, 0, 0, 0, cast(id as int))
      from range(1, " ~ (n_orders + 1) ~ ") as r(id)") %}
    {% do run_query("insert into shop_raw.order_items
      select o.id, l.line_no, concat('SKU-', (o.id * 7 + l.line_no) % 20),
             cast(l.line_no as int), cast(((o.id + l.line_no) % 50) + 0.99 as decimal(10, 2))
      from range(1, " ~ (n_orders + 1) ~ ") as o(id)
      cross join (select explode(sequence(1, " ~ items_per_order ~ ")) as line_no) as l") %}
    {#- the landing folder of order events: JSON lines files, as a shop's web tier drops them -#}
    {% do run_query("insert into shop_raw.order_events
      select id, 'placed', timestamp'2026-02-01 00:00:00' + make_interval(0, 0, 0, 0, cast(id as int))
      from range(1, " ~ (n_orders + 1) ~ ") as r(id)") %}
    {{ log("created shop_raw with " ~ customers ~ " customers and " ~ n_orders ~ " orders", info=true) }}
  {% endif %}
  {#- the customers' change feed begins with the connector's snapshot: a read (op r) of each
      customer, when the feed is new (also beside customers created before it) -#}
  {% if run_query("select count(*) from shop_raw.customer_cdc").columns[0].values()[0] == 0 %}
    {% do run_query("insert into shop_raw.customer_cdc
      select null, " ~ cdc_row() ~ ", 'r', unix_millis(updated_at), named_struct('lsn', customer_id)
      from shop_raw.customers") %}
  {% endif %}
{% endmacro %}

{#- A customer as a row of the Debezium feed, from shop_raw.customers' columns (country given,
    or the row's own). -#}
{% macro cdc_row(country='country') %}
  {{- return("named_struct('customer_id', customer_id, 'name', name, 'email', email, 'country', " ~ country ~ ")") -}}
{% endmacro %}

{% macro cdc_row_type() %}
  {{- return('struct<customer_id: bigint, name: string, email: string, country: string>') -}}
{% endmacro %}
