{#-
  for_system_time(relation, as_of=t | before=t | from_to=(t1, t2) | between=(t1, t2))
  The rows of a Delta table valid at a time (or during a period), with `_sys_start` and
  `_sys_end`: Netezza's system-time travel over the Change Data Feed (streams/travel/for_system_time.py).
  retention_start(relation): the earliest time it can be asked about.
-#}
{% macro for_system_time(relation, as_of=none, before=none, from_to=none, between=none) -%}
  {{ return(adapter.dispatch('for_system_time', 'dbt')(relation, as_of, before, from_to, between)) }}
{%- endmacro %}


{% macro spark_streams__for_system_time(relation, as_of, before, from_to, between) -%}
  {%- if not execute -%}
    {{ return(relation) }}
  {%- endif -%}
  {%- if model.resource_type == 'unit_test' -%}
    {{ return(adapter.fixture_system_time_sql(relation)) }}
  {%- endif -%}
  {%- set options = {
      'as_of': as_of, 'before': before, 'from_to': from_to, 'between': between,
      'empty': relation.limit == 0,
  } -%}
  {{ return(adapter.system_time_sql(node_id=model.unique_id, source=relation, options=options)) }}
{%- endmacro %}


{% macro retention_start(relation) -%}
  {{ return(adapter.dispatch('retention_start', 'dbt')(relation)) }}
{%- endmacro %}


{% macro spark_streams__retention_start(relation) -%}
  {#- At parse time, and in a unit test (a fixture has no history): the earliest time. -#}
  {%- if not execute or model.resource_type == 'unit_test' -%}
    {{ return('1970-01-01 00:00:00') }}
  {%- endif -%}
  {{ return(adapter.retention_start(node_id=model.unique_id, source=relation)) }}
{%- endmacro %}
