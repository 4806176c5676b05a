{#- incremental_strategy 'apply_changes': the target mirrors the source (and `apply_deletes`, the
    mirror's write when its sources only lost rows). -#}


{% macro stream_apply_changes_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_apply_changes_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}


{#- A mirror: DELETEs that are not half of an update remove the key, INSERTs upsert it. -#}
{#- dbt's merge_update_columns, merge_exclude_columns and incremental_predicates apply as in
    dbt's incremental models (streams/builds/incremental_settings.py). -#}
{% macro spark_streams__stream_apply_changes_sql(source, target, columns, unique_key) -%}
  {%- set settings = spark_streams__consumer().merge -%}
  {%- set updated = settings.update_set(columns) -%}
  merge into {{ target }} as t
  using (select * from {{ source }} where not (metadata_action = 'DELETE' and metadata_isupdate)) as s
  on {{ spark_streams__key_match(unique_key) }}{{ spark_streams__key_ranges(source, target, unique_key) }}{{ settings.join_predicates() }}
  when matched and s.metadata_action = 'DELETE' then delete
  {%- if updated %}
  when matched then update set {{ spark_streams__set_columns(updated) }}
  {%- endif %}
  when not matched and s.metadata_action = 'INSERT' then insert ({{ get_quoted_csv(columns) }})
    values ({{ spark_streams__prefixed_columns('s', columns) }})
{%- endmacro %}


{% macro stream_apply_deletes_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_apply_deletes_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}


{#-
  A mirror whose sources only lost rows since its offsets (streams/delta/appends.py): the change set
  holds only DELETEs, and a MERGE with only its delete clause finds their rows with an inner
  join (a MERGE that may insert needs an outer one).
-#}
{% macro spark_streams__stream_apply_deletes_sql(source, target, columns, unique_key) -%}
  merge into {{ target }} as t
  using (select * from {{ source }} where metadata_action = 'DELETE') as s
  on {{ spark_streams__key_match(unique_key) }}{{ spark_streams__key_ranges(source, target, unique_key) }}{{ spark_streams__consumer().merge.join_predicates() }}
  when matched then delete
{%- endmacro %}
