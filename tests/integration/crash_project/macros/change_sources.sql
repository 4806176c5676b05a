{% macro change_sources() %}
  {%- set round = var('round', none) -%}
  {%- if round is none -%}{{ return('select 1') }}{%- endif -%}
  {%- if round == 0 -%}
    {% do run_query('create schema if not exists crash_raw') %}
    {% do run_query('create table crash_raw.customers (id int, name string, tier string) using delta') %}
    {% do run_query('create table crash_raw.orders (id int, amount int) using delta') %}
    {% do run_query('create table crash_raw.events (id int, kind string) using parquet') %}
    {% do run_query('create table crash_raw.order_events (id int, amount int, op string, seq bigint) using delta') %}
    {% do run_query("insert into crash_raw.order_events select id % 7, id, 'U', id from range(1, 15)") %}
    {% do run_query("insert into crash_raw.events select id, 'seen' from range(1, 11)") %}
    {% do run_query("insert into crash_raw.customers select id, concat('c', id), 'basic' from range(1, 21)") %}
    {% do run_query('insert into crash_raw.orders select id, id * 10 from range(1, 31)') %}
  {%- else -%}
    {% do run_query("update crash_raw.customers set tier = 'gold" ~ round ~ "' where id % 3 = " ~ round % 3) %}
    {% do run_query('delete from crash_raw.customers where id = ' ~ (round + 1)) %}
    {% do run_query("insert into crash_raw.customers values (" ~ (100 + round) ~ ", 'new', 'basic')") %}
    {% do run_query('insert into crash_raw.orders select id, id * 10 from range(' ~ (100 * round) ~ ', ' ~ (100 * round + 5) ~ ')') %}
    {% do run_query("insert into crash_raw.events select id, 'landed' from range(" ~ (100 * round) ~ ", " ~ (100 * round + 5) ~ ")") %}
    {#- change events: upserts and deletes of seven keys, one late (older than the round before) -#}
    {% do run_query("insert into crash_raw.order_events select id % 7, id, if(id % 4 = 0, 'D', 'U'), 100 * " ~ round ~ " + id from range(0, 6)") %}
    {% do run_query("insert into crash_raw.order_events values (" ~ round % 7 ~ ", -1, 'U', " ~ (100 * round - 150) ~ ")") %}
  {%- endif -%}
  {{ return('select 1') }}
{% endmacro %}
