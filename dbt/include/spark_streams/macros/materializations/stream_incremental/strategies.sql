{#- The one write statement of an incremental stream build, per strategy. -#}
{% macro spark_streams__stream_write_sql(strategy, source, target, columns) %}
  {%- if strategy == 'append' -%}
    {{ return(adapter.dispatch('stream_append_sql', 'dbt')(source, target, columns)) }}
  {%- elif strategy == 'merge' -%}
    {{ return(adapter.dispatch('stream_merge_sql', 'dbt')(source, target, columns)) }}
  {%- else -%}
    {{ return(adapter.dispatch('stream_apply_changes_sql', 'dbt')(source, target, columns)) }}
  {%- endif -%}
{% endmacro %}


{#- The model's unique_key as a list (empty without one). -#}
{% macro spark_streams__unique_keys() -%}
  {%- set keys = config.get('unique_key') -%}
  {{ return([keys] if keys is string else (keys or [])) }}
{%- endmacro %}


{% macro spark_streams__key_match(left, right) -%}
  {%- for key in spark_streams__unique_keys() -%}
    {{ left }}.{{ adapter.quote(key) }} <=> {{ right }}.{{ adapter.quote(key) }}{{ ' and ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{% macro spark_streams__stream_append_sql(source, target, columns) -%}
  insert into {{ target }} ({% for c in columns %}{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %})
  select {% for c in columns %}{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %} from {{ source }}
{%- endmacro %}


{% macro spark_streams__stream_merge_sql(source, target, columns) -%}
  merge into {{ target }} as t
  using {{ source }} as s
  on {{ spark_streams__key_match('t', 's') }}
  when matched then update set
    {% for c in columns %}t.{{ adapter.quote(c) }} = s.{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %}
  when not matched then insert ({% for c in columns %}{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %})
    values ({% for c in columns %}s.{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %})
{%- endmacro %}


{#- A mirror: DELETEs that are not half of an update remove the key, INSERTs upsert it. -#}
{% macro spark_streams__stream_apply_changes_sql(source, target, columns) -%}
  merge into {{ target }} as t
  using (select * from {{ source }} where not (metadata_action = 'DELETE' and metadata_isupdate)) as s
  on {{ spark_streams__key_match('t', 's') }}
  when matched and s.metadata_action = 'DELETE' then delete
  when matched then update set
    {% for c in columns %}t.{{ adapter.quote(c) }} = s.{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %}
  when not matched and s.metadata_action = 'INSERT' then insert ({% for c in columns %}{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %})
    values ({% for c in columns %}s.{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %})
{%- endmacro %}


{#-
  A stream target takes a small MERGE on every build, so it is created with deletion vectors:
  Delta then marks changed rows instead of copying every untouched row of the files they sit
  in. The model's own tblproperties win, e.g. {'delta.enableDeletionVectors': 'false'}.
-#}
{% macro spark_streams__target_tblproperties() -%}
  {%- set properties = {'delta.enableDeletionVectors': 'true'} -%}
  {%- do properties.update(config.get('tblproperties') or {}) -%}
  tblproperties (
    {%- for name, value in properties.items() %}
    {{ spark_streams__string_literal(name) }} = {{ spark_streams__string_literal(value) }}{{ ',' if not loop.last }}
    {%- endfor %}
  )
{%- endmacro %}


{% macro spark_streams__string_literal(value) -%}
  '{{ (value | string).replace('\\', '\\\\').replace("'", "\\'") }}'
{%- endmacro %}


{#-
  The first build (and --full-refresh): the target created from the stream's rows, in key
  order when there is a key. With file_rows capping each file, every file then holds one key
  range, and a later MERGE of changes that cluster by key rewrites only a few small files.
-#}
{% macro spark_streams__stream_create_sql(relation, sql, strategy, columns) -%}
  create or replace table {{ relation }}
  using delta
  {{ options_clause() }}
  {{ spark_streams__target_tblproperties() }}
  {{ partition_cols(label="partitioned by") }}
  {{ location_clause() }}
  {{ comment_clause() }}
  as
  {%- if strategy == 'apply_changes' %}
  select {% for c in columns %}{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %}
  from (
    {{ sql }}
  ) where metadata_action = 'INSERT'
  {%- else %}
  select * from (
    {{ sql }}
  )
  {%- endif %}
  {{ spark_streams__key_order() }}
{%- endmacro %}


{% macro spark_streams__key_order() -%}
  {%- set keys = spark_streams__unique_keys() -%}
  {%- if keys and spark_streams__file_rows() > 0 -%}
  order by {% for key in keys %}{{ adapter.quote(key) }}{{ ', ' if not loop.last }}{% endfor %}
  {%- endif -%}
{%- endmacro %}
