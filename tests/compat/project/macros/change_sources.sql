{% macro change_sources() %}
  {%- set round = var('round', none) -%}
  {%- if round is none -%}{{ return('select 1') }}{%- endif -%}
  {%- if round == 0 -%}
    {%- if var('seeded_empty', false) and execute -%}
      {#- after `dbt seed --empty` (dbt-core 1.12): the seed's table, with no rows -#}
      {%- set rows = run_query('select count(*) from ' ~ target.schema ~ '.tiers').columns[0].values()[0] -%}
      {%- if rows != 0 -%}
        {{ exceptions.raise_compiler_error('dbt seed --empty left ' ~ rows ~ ' rows in tiers') }}
      {%- endif -%}
    {%- endif -%}
    {% do run_query('create schema if not exists compat_raw') %}
    {% do run_query('create table compat_raw.customers (id int, name string, tier string) using delta') %}
    {% do run_query('create table compat_raw.orders (id int, amount int) using delta') %}
    {% do run_query('create table compat_raw.events (id int, kind string) using parquet') %}
    {% do run_query('create table compat_raw.customer_events (id int, tier string, login int, seq int, op string) using delta') %}
    {% do run_query("insert into compat_raw.customer_events select id, 'basic', 0, 1, 'U' from range(1, 11)") %}
    {% do run_query("insert into compat_raw.events select id, 'seen' from range(1, 11)") %}
    {% do run_query("insert into compat_raw.customers select id, concat('c', id), 'basic' from range(1, 21)") %}
    {% do run_query('insert into compat_raw.orders select id, id * 10 from range(1, 31)') %}
  {%- else -%}
    {% do run_query("update compat_raw.customers set tier = 'gold" ~ round ~ "' where id % 3 = " ~ round % 3) %}
    {% do run_query('delete from compat_raw.customers where id = ' ~ (round + 1)) %}
    {% do run_query("insert into compat_raw.customers values (" ~ (100 + round) ~ ", 'new', 'basic')") %}
    {% do run_query('insert into compat_raw.orders select id, id * 10 from range(' ~ (100 * round) ~ ', ' ~ (100 * round + 5) ~ ')') %}
    {% do run_query("insert into compat_raw.events select id, 'landed' from range(" ~ (100 * round) ~ ", " ~ (100 * round + 5) ~ ")") %}
    {#- change events: a tier changed, a login alone changed, a key deleted, a late event for
        the key deleted the round before (older than its delete: it stays deleted), and the
        round before's first event delivered again -#}
    {%- set seq = 10 * round -%}
    {% do run_query("insert into compat_raw.customer_events select id, 'gold" ~ round ~ "', " ~ round ~ ", " ~ (seq + 1) ~ ", 'U' from range(1, 11) where id % 3 = " ~ round % 3) %}
    {% do run_query("insert into compat_raw.customer_events select id, max_by(tier, seq), " ~ (10 + round) ~ ", " ~ (seq + 2) ~ ", 'U' from compat_raw.customer_events where id = 4 group by id") %}
    {% do run_query("insert into compat_raw.customer_events values (" ~ (round + 6) ~ ", null, null, " ~ (seq + 3) ~ ", 'D')") %}
    {% do run_query("insert into compat_raw.customer_events values (" ~ (round + 5) ~ ", 'late', 99, " ~ (seq - 15) ~ ", 'U')") %}
    {% do run_query("insert into compat_raw.customer_events select * from compat_raw.customer_events where seq = " ~ (seq - 9) ~ " limit 1") %}
  {%- endif -%}
  {{ return('select 1') }}
{% endmacro %}
