{#-
  stream(relation, name, mode, unique_key, show_initial_rows, at, before)
  The change records of a stream on `relation` since its offset. In a `stream_incremental`
  model the build consumes them; anywhere else this is a read-only peek.
-#}
{% macro stream(relation, name=none, mode='standard', unique_key=none, show_initial_rows=true, at=none, before=none) -%}
  {{ return(adapter.dispatch('stream', 'dbt')(relation, name, mode, unique_key, show_initial_rows, at, before)) }}
{%- endmacro %}


{% macro spark_streams__stream(relation, name, mode, unique_key, show_initial_rows, at, before) -%}
  {#- At parse time ref()/source() only register the edge; nothing is read. -#}
  {%- if not execute -%}
    {{ return(relation) }}
  {%- endif -%}
  {%- set consuming = model.resource_type == 'model' and config.get('materialized') == 'stream_incremental' -%}
  {%- set existing = adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier) if consuming else none -%}
  {%- set options = {
      'name': name or (model.name ~ '__' ~ relation.identifier),
      'mode': mode,
      'unique_key': unique_key or (config.get('unique_key') if consuming else none),
      'show_initial_rows': show_initial_rows,
      'at': at,
      'before': before,
      'auto_enable_change_tracking': config.get('auto_enable_change_tracking', true),
  } -%}
  {%- set change_sql = adapter.stream_sql(
      model.unique_id, consuming, this, existing is not none and existing.is_delta,
      consuming and should_full_refresh(), relation, options) -%}
  {{ return('(' ~ change_sql ~ ')') }}
{%- endmacro %}
