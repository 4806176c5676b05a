{#-
  current_valid_time(relation, valid_from='valid_from', valid_to='valid_to', at='transaction')
  The rows of a valid-time table (a `history` target, or a dbt snapshot with
  valid_from='dbt_valid_from', valid_to='dbt_valid_to') whose period covers the reference
  time, without the period columns: Teradata's CURRENT VALIDTIME (streams/travel/current_valid_time.py).
  at='transaction': when this dbt invocation started, the same in every model of the run;
  at='now': each statement's current_timestamp().
-#}
{% macro current_valid_time(relation, valid_from='valid_from', valid_to='valid_to', at='transaction') -%}
  {{ return(adapter.dispatch('current_valid_time', 'dbt')(relation, valid_from, valid_to, at)) }}
{%- endmacro %}


{% macro spark_streams__current_valid_time(relation, valid_from, valid_to, at) -%}
  {%- if not execute -%}
    {{ return(relation) }}
  {%- endif -%}
  {{ return(adapter.current_valid_time_sql(
      relation=relation, valid_from=valid_from, valid_to=valid_to, at=at, started=run_started_at)) }}
{%- endmacro %}
