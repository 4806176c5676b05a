{#- incremental_strategy 'merge': upsert the change set by unique_key, as dbt-spark's merge. -#}


{% macro stream_merge_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_merge_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}


{% macro spark_streams__stream_merge_sql(source, target, columns, unique_key) -%}
  merge into {{ target }} as t
  using {{ source }} as s
  on {{ spark_streams__key_match(unique_key) }}{{ spark_streams__key_ranges(source, target, unique_key) }}
  when matched then update set {{ spark_streams__set_columns(columns) }}
  when not matched then insert ({{ get_quoted_csv(columns) }})
    values ({{ spark_streams__prefixed_columns('s', columns) }})
{%- endmacro %}
