{#-
  stream_incremental: builds the target from the model's streams and moves their offsets in
  the same Delta commit. The first build and --full-refresh create the target and the streams
  (first_build.sql). The model's config is checked and defaulted in Python
  (streams/builds/config.py); the macros here only render SQL from it.

  A later build's write is one macro per strategy, named stream_<strategy>_sql, one file each
  (append.sql, merge.sql, apply_changes.sql, history.sql). The materialization finds it by name
  in the model's context, the way dbt finds get_incremental_<strategy>_sql, and each
  dispatches, so a project overrides one with spark_streams__stream_merge_sql (or
  stream_merge_sql) in its own macros. A new strategy is one more file of that shape plus its
  name in streams/builds/config.py. Each takes the change set (a temporary view), the target,
  the columns to write and the model's unique_key (a list, empty without one); what else it
  needs of the model's config it gets from spark_streams__consumer() (helpers.sql).
-#}
{% materialization stream_incremental, adapter='spark_streams' -%}
  {%- set existing = adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier) -%}
  {#- apply_cdc's events as rows where the model reads an envelope (cdc_format, streams/cdc/) -#}
  {%- set sql = adapter.cdc_events_sql(node_id=model.unique_id, model_name=model.name, config=config, sql=sql) -%}
  {#- Python decides (streams/builds/build.py): rebuild, write the changes, or write nothing. -#}
  {%- set plan = adapter.stream_build_plan(
      node_id=model.unique_id, model_name=model.name, config=config, existing=existing,
      full_refresh=should_full_refresh(), sql=sql) -%}
  {%- set consumer = plan.consumer -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- if plan.has_changes -%}
    {#- The change set as a temporary view; its columns come from the view's description,
        which costs less than a query for them. -#}
    {%- set tmp_relation = make_temp_relation(this) -%}
    {%- set changes_sql = spark_streams__broadcast_hinted(sql) if plan.broadcast_changes else sql -%}
    {% call statement('stream_changes') %}{{ create_table_as(True, tmp_relation, changes_sql) }}{% endcall %}
    {%- set change_columns = adapter.get_columns_in_relation(tmp_relation) -%}
    {%- set output_columns = change_columns | map(attribute='name') | list -%}
  {%- else -%}
    {%- set output_columns = get_columns_in_query(sql) -%}
  {%- endif -%}
  {%- set columns = consumer.target_columns(output_columns) -%}
  {#- merge_update_columns / merge_exclude_columns naming a column the model does not write
      fail the first build too, not only the first MERGE -#}
  {%- do consumer.merge.update_set(columns) -%}

  {{ run_hooks(pre_hooks) }}

  {%- if plan.rebuild -%}
    {%- if plan.drop_existing -%}
      {% do adapter.drop_relation(existing) %}
    {%- endif -%}
    {#- a view stream's rebuild: the view's rows in place of its changes (kinds/view_rebuild.py) -#}
    {%- set build_sql = spark_streams__stream_rebuild_sql(target_relation, plan.model_sql(sql), consumer, columns, plan, existing) -%}
  {%- elif not plan.has_changes -%}
    {#- No source committed since the streams' offsets: nothing to consume, nothing to write. -#}
    {%- set build_sql = none -%}
  {%- else -%}
    {#- A column its source widened is widened in the target first; any other change of a
        column's type stops the build here (streams/delta/type_widening.py). -#}
    {%- set target_columns = adapter.get_columns_in_relation(existing) -%}
    {%- do adapter.stream_widen_target(
        node_id=model.unique_id, model_name=model.name, target=existing,
        change_columns=change_columns, target_columns=target_columns, columns=columns,
        on_schema_change=consumer.on_schema_change) -%}
    {%- set columns = spark_streams__stream_schema_changes(tmp_relation, existing, columns, consumer.on_schema_change, target_columns) -%}
    {#- One macro per strategy, found by name as dbt finds get_incremental_<strategy>_sql;
        a mirror of sources that only gained rows is written by append (streams/delta/appends.py). -#}
    {%- set write_sql = adapter.stream_strategy_macro(context=context, strategy=plan.write_strategy) -%}
    {%- set build_sql = write_sql(tmp_relation, target_relation, columns, consumer.unique_key) -%}
  {%- endif -%}

  {%- set response = adapter.commit_stream_build(
      node_id=model.unique_id, statement=build_sql, file_rows=consumer.file_rows) -%}
  {% do store_result('main', response=response) %}

  {{ run_hooks(post_hooks) }}
  {% do persist_docs(target_relation, model) %}
  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}


{#-
  The change set, with a hint that Spark broadcast it to the write's join with the target: the
  build's history bounds its rows (streams/delta/change_size.py), which Spark cannot know, and would
  otherwise shuffle every key of the target to join them.
-#}
{% macro spark_streams__broadcast_hinted(sql) -%}
  {#- a model may end with a semicolon, which Spark allows after a statement, not in a subquery -#}
  select /*+ BROADCAST(_stream_changes) */ * from (
    {{ sql.strip().rstrip(';') }}
  ) as _stream_changes
{%- endmacro %}


{#-
  on_schema_change for the columns the target keeps: returns the columns to write. The
  comparison runs against a view of exactly those columns, so stream metadata dropped by
  apply_changes never counts as a new column. `target_columns`: the target's, as described
  before the build widened any (their names are what this reads of them).
-#}
{% macro spark_streams__stream_schema_changes(tmp_relation, existing, columns, on_schema_change, target_columns) %}
  {%- if on_schema_change != 'ignore' -%}
    {%- set kept_relation = make_temp_relation(this, '__dbt_kept') -%}
    {% call statement('stream_kept_columns') %}
      create or replace temporary view {{ kept_relation }} as
      select {{ get_quoted_csv(columns) }} from {{ tmp_relation }}
    {% endcall %}
    {%- set schema_changes = process_schema_changes(on_schema_change, kept_relation, existing) -%}
    {%- if on_schema_change in ['append_new_columns', 'sync_all_columns'] -%}
      {{ return(adapter.get_columns_in_relation(existing) | map(attribute='name') | select('in', columns) | list) }}
    {%- endif -%}
  {%- endif -%}
  {%- set target_names = target_columns | map(attribute='name') | list -%}
  {{ return(columns | select('in', target_names) | list) }}
{% endmacro %}
