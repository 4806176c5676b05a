{#-
  The write statement of an incremental stream build: one macro per strategy, named
  stream_<strategy>_sql. The materialization finds it by name in the model's context, the way
  dbt finds get_incremental_<strategy>_sql, and each dispatches, so a project overrides one
  with spark_streams__stream_merge_sql (or stream_merge_sql) in its own macros. A new strategy
  is one more pair here plus its name in streams/consumer_config.py. Each takes the change set
  (a temporary view), the target, the columns to write and the model's unique_key (a list,
  empty without one).
-#}

{% macro stream_append_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_append_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}

{% macro stream_merge_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_merge_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}

{% macro stream_apply_changes_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_apply_changes_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}


{% macro spark_streams__stream_append_sql(source, target, columns, unique_key) -%}
  insert into {{ target }} ({{ get_quoted_csv(columns) }})
  select {{ get_quoted_csv(columns) }} from {{ source }}
{%- endmacro %}


{% macro spark_streams__stream_merge_sql(source, target, columns, unique_key) -%}
  merge into {{ target }} as t
  using {{ source }} as s
  on {{ spark_streams__key_match(unique_key) }}
  when matched then update set {{ spark_streams__set_columns(columns) }}
  when not matched then insert ({{ get_quoted_csv(columns) }})
    values ({{ spark_streams__prefixed_columns('s', columns) }})
{%- endmacro %}


{#- A mirror: DELETEs that are not half of an update remove the key, INSERTs upsert it. -#}
{% macro spark_streams__stream_apply_changes_sql(source, target, columns, unique_key) -%}
  merge into {{ target }} as t
  using (select * from {{ source }} where not (metadata_action = 'DELETE' and metadata_isupdate)) as s
  on {{ spark_streams__key_match(unique_key) }}
  when matched and s.metadata_action = 'DELETE' then delete
  when matched then update set {{ spark_streams__set_columns(columns) }}
  when not matched and s.metadata_action = 'INSERT' then insert ({{ get_quoted_csv(columns) }})
    values ({{ spark_streams__prefixed_columns('s', columns) }})
{%- endmacro %}


{#- t.`k` <=> s.`k` for each key column: null keys match each other, as in the stream. -#}
{% macro spark_streams__key_match(unique_key) -%}
  {%- for key in unique_key -%}
    t.{{ adapter.quote(key) }} <=> s.{{ adapter.quote(key) }}{{ ' and ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{% macro spark_streams__set_columns(columns) -%}
  {%- for c in columns -%}
    t.{{ adapter.quote(c) }} = s.{{ adapter.quote(c) }}{{ ', ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{% macro spark_streams__prefixed_columns(prefix, columns) -%}
  {%- for c in columns -%}
    {{ prefix }}.{{ adapter.quote(c) }}{{ ', ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{#- The target's table properties (deletion vectors on unless the model says otherwise; see
    DEFAULT_TARGET_PROPERTIES in streams/consumer_config.py). -#}
{% macro spark_streams__target_tblproperties(consumer) -%}
  tblproperties (
    {%- for name, value in consumer.target_properties.items() %}
    {{ adapter.sql_string_literal(name) }} = {{ adapter.sql_string_literal(value) }}{{ ',' if not loop.last }}
    {%- endfor %}
  )
{%- endmacro %}


{#-
  The first build (and --full-refresh): the target created from the stream's rows, in key
  order when there is a key. With file_rows capping each file, every file then holds one key
  range, and a later MERGE of changes that cluster by key rewrites only a few small files.
-#}
{% macro spark_streams__stream_create_sql(relation, sql, consumer, columns) -%}
  create or replace table {{ relation }}
  using delta
  {{ options_clause() }}
  {{ spark_streams__target_tblproperties(consumer) }}
  {{ partition_cols(label="partitioned by") }}
  {{ location_clause() }}
  {{ comment_clause() }}
  as
  {%- if consumer.first_build_inserts_only %}
  select {{ get_quoted_csv(columns) }}
  from (
    {{ sql }}
  ) where metadata_action = 'INSERT'
  {%- else %}
  select * from (
    {{ sql }}
  )
  {%- endif %}
  {%- if consumer.first_build_order %}
  order by {{ get_quoted_csv(consumer.first_build_order) }}
  {%- endif %}
{%- endmacro %}
