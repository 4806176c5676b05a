{#-
  materialized_view: a Delta table holding the model's query, refreshed by its sources'
  changes where the query allows (streams/mv/). Python decides (streams/mv/plan.py): refresh
  fully (and why), rebuild from the sources' current rows (the first build, --full-refresh, a
  changed definition), or write the changed groups. The incremental paths read the model's
  input through a view stream named after the model and commit the target's write with its
  offsets, exactly as a stream_incremental build does (the same plan and commit).
-#}
{% materialization materialized_view, adapter='spark_streams' -%}
  {%- set existing = adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set dry_run = spark_streams__dry_run_flag() -%}
  {%- set mv = none if dry_run else adapter.materialized_view_plan(
      node_id=model.unique_id, model_name=model.name, config=config, sql=sql,
      existing=existing, full_refresh=should_full_refresh(),
      replaced_inputs=spark_streams__replaced_inputs()) -%}

  {{ run_hooks(pre_hooks) }}

  {%- if dry_run -%}
    {#- as a stream_incremental build's: the table created empty where it is missing (its next
        build computes it from its sources' current rows), an existing one left as it is -#}
    {%- if existing is none -%}
      {% call statement('main') -%}
        {{ create_table_as(False, target_relation, 'select * from (\n' ~ sql ~ '\n) where false') }}
      {%- endcall %}
    {%- endif -%}
    {%- set response = adapter.materialized_view_dry_run(flag=dry_run, created=existing is none) -%}
  {%- elif not mv.incremental -%}
    {%- if existing is not none and not existing.is_delta -%}
      {% do adapter.drop_relation(existing) %}
    {%- endif -%}
    {% call statement('main') -%}
      {{ create_table_as(False, target_relation, sql) }}
    {%- endcall %}
    {%- set response = adapter.materialized_view_response(node_id=model.unique_id, response=none) -%}
  {%- else -%}
    {%- if mv.joined -%}
      {#- an outer join: each table followed by a stream of its own (streams/mv/joined_sql.py) -#}
      {%- for table in mv.tables -%}
        {%- set relation = api.Relation.create(database=this.database, schema=table.schema, identifier=table.name) -%}
        {%- do spark_streams__materialized_view_stream(relation, mv.rebuild, table.stream) -%}
      {%- endfor -%}
      {%- do adapter.materialized_view_estimate(node_id=model.unique_id) -%}
      {%- set changes_sql = '' -%}
    {%- else -%}
      {%- set input_relation = api.Relation.create(
          database=this.database, schema=this.schema, identifier=mv.input_name, type='view') -%}
      {#- (re)created on a rebuild, and where it is missing: a `dbt clone` copies the target alone -#}
      {%- if mv.rebuild or adapter.get_relation(
          database=this.database, schema=this.schema, identifier=mv.input_name) is none -%}
        {% call statement('materialized_view_input') -%}
          create or replace view {{ input_relation }} as {{ mv.input_sql }}
        {%- endcall %}
      {%- endif -%}
      {%- set changes_sql = spark_streams__materialized_view_stream(input_relation, mv.rebuild, model.name) -%}
    {%- endif -%}
    {%- set plan = adapter.stream_build_plan(
        node_id=model.unique_id, model_name=model.name, config=config, existing=existing,
        full_refresh=mv.rebuild) -%}
    {%- set consumer = plan.consumer -%}
    {%- if plan.rebuild -%}
      {%- if plan.drop_existing -%}
        {% do adapter.drop_relation(existing) %}
      {%- endif -%}
      {%- set names = get_columns_in_query(sql) | list -%}
      {%- set first_sql = adapter.materialized_view_sql(
          node_id=model.unique_id, changes=changes_sql, target=none, names=names) -%}
      {%- set build_sql = spark_streams__stream_rebuild_sql(
          target_relation, first_sql, consumer, names, plan, existing,
          spark_streams__kept_state(first_sql, names)) -%}
    {%- elif plan.has_changes -%}
      {#- the change read inline in the refresh's one statement: a temporary view of it would
          have Delta resolve its versions once more, for nothing the refresh reads -#}
      {%- set names = adapter.get_columns_in_relation(existing) | map(attribute='name') | list -%}
      {%- set build_sql = adapter.materialized_view_sql(
          node_id=model.unique_id, changes='(' ~ changes_sql ~ ')', target=target_relation, names=names) -%}
    {%- else -%}
      {%- set build_sql = none -%}
    {%- endif -%}
    {%- set committed = adapter.commit_stream_build(
        node_id=model.unique_id, statement=build_sql, file_rows=consumer.file_rows) -%}
    {%- set response = adapter.materialized_view_response(node_id=model.unique_id, response=committed) -%}
  {%- endif -%}
  {% do store_result('main', response=response) %}

  {{ run_hooks(post_hooks) }}
  {% do persist_docs(target_relation, model) %}
  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}


{#- The changes of the model's input (or of one of its tables) since its offsets, through a
    stream named `name` consumed by the model (its first rows on a rebuild, which restarts it). -#}
{% macro spark_streams__materialized_view_stream(input_relation, rebuild, name) -%}
  {%- set options = {
      'name': name,
      'relation_label': input_relation.identifier,
      'mode': 'standard',
      'unique_key': none,
      'show_initial_rows': true,
      'at': none,
      'before': none,
      'stream_consumers': spark_streams__stream_consumers(),
      'empty': false,
      'sample': false,
  } -%}
  {%- set existing = adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier) -%}
  {{ return(adapter.stream_sql(
      node_id=model.unique_id, model_name=model.name, config=config, consuming=true,
      target=this, target_exists=existing is not none and existing.is_delta,
      full_refresh=rebuild, source=input_relation, options=options)) }}
{%- endmacro %}


{#- Under an enforced contract: the aggregate state the first rows keep beside the query's own
    columns, with Spark's types ({name, data_type}), for the contract's table to hold too. -#}
{% macro spark_streams__kept_state(first_sql, names) -%}
  {%- set kept = [] -%}
  {%- if config.get('contract').enforced -%}
    {%- for row in run_query('describe query ' ~ first_sql) if row[0] not in names -%}
      {%- do kept.append({'name': row[0], 'data_type': row[1]}) -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return(kept) }}
{%- endmacro %}


{#- dbt's flag that makes this build a dry run: --empty (each input read with `limit 0`), or
    --sample where one of the model's inputs has an event_time (read in the sample's window).
    Refreshed from such inputs, the table would hold a part of its query's rows and its
    streams would move past the rest. -#}
{% macro spark_streams__dry_run_flag() -%}
  {%- if flags.EMPTY -%}
    {{ return('--empty') }}
  {%- endif -%}
  {%- if invocation_args_dict.get('sample') -%}
    {%- for unique_id in model.depends_on.nodes -%}
      {%- set node = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
      {%- if node and node.config.get('event_time') -%}
        {{ return('--sample') }}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return('') }}
{%- endmacro %}


{#- The models this one reads (through views and ephemeral models) whose builds replace their
    table: a table model always, a materialized view when it refreshes fully. {'schema.name':
    materialized}. A stream cannot follow a replaced table, so the refresh reads them whole. -#}
{% macro spark_streams__replaced_inputs() -%}
  {%- set found = {} -%}
  {%- set seen = [] -%}
  {%- set queue = model.depends_on.nodes | list -%}
  {%- for unique_id in queue if unique_id not in seen -%}
    {%- do seen.append(unique_id) -%}
    {%- set node = graph.nodes.get(unique_id) -%}
    {%- if node and node.resource_type == 'model' -%}
      {%- set materialized = node.config.materialized -%}
      {%- if materialized in ('view', 'ephemeral') -%}
        {%- do queue.extend(node.depends_on.nodes) -%}
      {%- elif materialized in ('table', 'materialized_view') -%}
        {%- do found.update({node.schema ~ '.' ~ (node.alias or node.name): materialized}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(found) }}
{%- endmacro %}
