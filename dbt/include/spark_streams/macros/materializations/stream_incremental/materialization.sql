{#-
  stream_incremental: builds the target from the model's streams and moves their offsets in
  the same Delta commit. The first build and --full-refresh create the target and the streams.
-#}
{% materialization stream_incremental, adapter='spark_streams' -%}
  {%- set strategy = spark_streams__stream_strategy() -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing = adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier) -%}
  {%- set rebuild = existing is none or should_full_refresh() or not existing.is_delta -%}
  {%- set has_changes = not rebuild and adapter.stream_changes_pending(model.unique_id) -%}
  {%- if has_changes -%}
    {#- The change set as a temporary view; its columns come from the view's description,
        which costs less than a query for them. -#}
    {%- set tmp_relation = make_temp_relation(this) -%}
    {% call statement('stream_changes') %}{{ create_table_as(True, tmp_relation, sql) }}{% endcall %}
    {%- set output_columns = adapter.get_columns_in_relation(tmp_relation) | map(attribute='name') | list -%}
  {%- else -%}
    {%- set output_columns = get_columns_in_query(sql) -%}
  {%- endif -%}
  {%- set columns = spark_streams__stream_target_columns(output_columns, strategy) -%}

  {{ run_hooks(pre_hooks) }}

  {%- if rebuild -%}
    {%- if existing is not none and not existing.is_delta -%}
      {% do adapter.drop_relation(existing) %}
    {%- endif -%}
    {%- set build_sql = spark_streams__stream_create_sql(target_relation, sql, strategy, columns) -%}
  {%- elif not has_changes -%}
    {#- No source committed since the streams' offsets: nothing to consume, nothing to write. -#}
    {%- set build_sql = none -%}
  {%- else -%}
    {%- set columns = spark_streams__stream_schema_changes(tmp_relation, existing, columns) -%}
    {%- set build_sql = spark_streams__stream_write_sql(strategy, tmp_relation, target_relation, columns) -%}
  {%- endif -%}

  {%- set response = adapter.commit_stream_build(model.unique_id, build_sql, spark_streams__file_rows()) -%}
  {% do store_result('main', response=response) %}

  {{ run_hooks(post_hooks) }}
  {% do persist_docs(target_relation, model) %}
  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}


{#-
  on_schema_change for the columns the target keeps: returns the columns to write. The
  comparison runs against a view of exactly those columns, so stream metadata dropped by
  apply_changes never counts as a new column.
-#}
{% macro spark_streams__stream_schema_changes(tmp_relation, existing, columns) %}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {%- if on_schema_change != 'ignore' -%}
    {%- set kept_relation = make_temp_relation(this, '__dbt_kept') -%}
    {% call statement('stream_kept_columns') %}
      create or replace temporary view {{ kept_relation }} as
      select {% for c in columns %}{{ adapter.quote(c) }}{{ ', ' if not loop.last }}{% endfor %} from {{ tmp_relation }}
    {% endcall %}
    {%- set schema_changes = process_schema_changes(on_schema_change, kept_relation, existing) -%}
    {%- if on_schema_change in ['append_new_columns', 'sync_all_columns'] -%}
      {{ return(adapter.get_columns_in_relation(existing) | map(attribute='name') | select('in', columns) | list) }}
    {%- endif -%}
  {%- endif -%}
  {%- set target_columns = adapter.get_columns_in_relation(existing) | map(attribute='name') | list -%}
  {{ return(columns | select('in', target_columns) | list) }}
{% endmacro %}
