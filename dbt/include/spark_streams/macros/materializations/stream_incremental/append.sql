{#- incremental_strategy 'append': insert every row of the change set. -#}


{% macro stream_append_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_append_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}


{% macro spark_streams__stream_append_sql(source, target, columns, unique_key) -%}
  insert into {{ target }} ({{ get_quoted_csv(columns) }})
  select {{ get_quoted_csv(columns) }} from {{ source }}
{%- endmacro %}
