{#- incremental_strategy 'merge': upsert the change set by unique_key, as dbt-spark's merge. -#}


{% macro stream_merge_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_merge_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}


{#- dbt's merge_update_columns, merge_exclude_columns and incremental_predicates apply as in
    dbt's incremental models (streams/builds/incremental_settings.py). -#}
{% macro spark_streams__stream_merge_sql(source, target, columns, unique_key) -%}
  {%- set settings = spark_streams__consumer().merge -%}
  {%- set updated = settings.update_set(columns) -%}
  merge into {{ target }} as t
  using {{ source }} as s
  on {{ spark_streams__key_match(unique_key) }}{{ spark_streams__key_ranges(source, target, unique_key) }}{{ settings.join_predicates() }}
  {%- if updated %}
  when matched then update set {{ spark_streams__set_columns(updated) }}
  {%- endif %}
  when not matched then insert ({{ get_quoted_csv(columns) }})
    values ({{ spark_streams__prefixed_columns('s', columns) }})
{%- endmacro %}
