{#- dbt's `merge` incremental strategy on Delta. dbt-spark writes `update set *` and
    `insert *`, which Delta resolves against the target's columns: once a model drops a
    column under on_schema_change='append_new_columns' (the target keeps it), every MERGE
    failed with DELTA_MERGE_UNRESOLVED_EXPRESSION. When the target has columns the new rows
    lack, the MERGE names the rows' columns instead: updates leave the kept column as it
    was, inserts leave it NULL, as dbt documents for append_new_columns. -#}
{% macro spark_streams__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) %}
  {%- set source_columns = adapter.get_columns_in_relation(source) | map(attribute='name') | list -%}
  {%- set source_names = source_columns | map('lower') | list -%}
  {%- set target_columns = adapter.get_columns_in_relation(target) | map(attribute='name') | list -%}
  {%- set missing = target_columns | map('lower') | reject('in', source_names) | list -%}
  {%- if not missing or config.get('merge_update_columns') or config.get('merge_exclude_columns') -%}
    {{ return(spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates)) }}
  {%- endif -%}
  {%- set star = spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) -%}
  {%- set quoted = source_columns | map('replace', '`', '``') | list -%}
  {%- set updates = [] -%}
  {%- set values = [] -%}
  {%- for column in quoted -%}
    {%- do updates.append('`' ~ column ~ '` = DBT_INTERNAL_SOURCE.`' ~ column ~ '`') -%}
    {%- do values.append('DBT_INTERNAL_SOURCE.`' ~ column ~ '`') -%}
  {%- endfor -%}
  {%- set head = star.split('when matched then update set')[0] -%}
  {{ head }}
      when matched then update set {{ updates | join(', ') }}
      when not matched then insert ({{ '`' ~ quoted | join('`, `') ~ '`' }}) values ({{ values | join(', ') }})
{% endmacro %}
