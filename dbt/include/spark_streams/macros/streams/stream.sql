{#-
  stream(relation, name, mode, unique_key, show_initial_rows, at, before)
  The change records of a stream on `relation` since its offset. In a `stream_incremental`
  model the build consumes them; anywhere else this is a read-only peek.
-#}
{% macro stream(relation, name=none, mode='standard', unique_key=none, show_initial_rows=true, at=none, before=none) -%}
  {{ return(adapter.dispatch('stream', 'dbt')(relation, name, mode, unique_key, show_initial_rows, at, before)) }}
{%- endmacro %}


{% macro spark_streams__stream(relation, name, mode, unique_key, show_initial_rows, at, before) -%}
  {#- At parse time ref()/source() only register the edge and explicit names are recorded in
      the model's meta, so every consumer can see the others' streams; nothing is read. -#}
  {%- if not execute -%}
    {%- if name -%}
      {% do config(meta={'dbt_spark_streams': {'streams': adapter.declare_stream(node_id=model.unique_id, name=name)}}) %}
    {%- endif -%}
    {{ return(relation) }}
  {%- endif -%}
  {#- In a dbt unit test the relation is a fixture: its rows are the change records. -#}
  {%- if model.resource_type == 'unit_test' -%}
    {{ return(adapter.fixture_stream_sql(model.unique_id, relation, unique_key)) }}
  {%- endif -%}
  {%- set consuming = model.resource_type == 'model' and config.get('materialized') == 'stream_incremental' -%}
  {%- set node = spark_streams__node_of(relation) -%}
  {%- if consuming -%}
    {%- do spark_streams__refuse_replaced_model(node, relation) -%}
  {%- elif model.resource_type == 'model' and config.get('materialized') == 'incremental'
        and flags.WHICH in ['run', 'build', 'retry'] -%}
    {#- a peek there: the same pending changes at every run, appended or merged again
        (`dbt show` and `dbt compile` of the model still peek) -#}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": stream() in an incremental model is a read-only peek, so "
        ~ "every run would read the same pending changes again (an append writes them twice). "
        ~ "Make it materialized='stream_incremental', which consumes the stream with the same "
        ~ "strategies (append, merge) and more.") }}
  {%- endif -%}
  {%- set existing = adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier) if consuming else none -%}
  {#- dbt's --empty renders every ref() and source() with `limit 0`, and --sample a source
      with an event_time with a time window: a dry run reads and consumes nothing. The model's config is checked and defaulted in Python
      (streams/builds/config.py). -#}
  {%- set options = {
      'name': name,
      'relation_label': spark_streams__relation_label(relation, node),
      'mode': mode,
      'unique_key': unique_key,
      'show_initial_rows': show_initial_rows,
      'at': at,
      'before': before,
      'stream_consumers': spark_streams__stream_consumers() if consuming else {},
      'empty': relation.limit == 0,
      'sample': relation.event_time_filter is not none,
  } -%}
  {%- set change_sql = adapter.stream_sql(
      node_id=model.unique_id, model_name=model.name, config=config, consuming=consuming,
      target=this, target_exists=existing is not none and existing.is_delta,
      full_refresh=consuming and should_full_refresh(), source=relation, options=options) -%}
  {{ return(change_sql) }}
{%- endmacro %}


{#- Every stream_incremental model of the project with the stream names it declares
    (`name=` in its stream() calls, recorded in its meta at parse time). A stream whose
    consumer is not among them has lost its owner, and another model may take it over; two
    models declaring one name would both consume it. -#}
{% macro spark_streams__stream_consumers() -%}
  {%- set consumers = {} -%}
  {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.config.materialized == 'stream_incremental' -%}
    {%- do consumers.update({node.unique_id: node.config.meta.get('dbt_spark_streams', {}).get('streams', [])}) -%}
  {%- endfor -%}
  {#- a materialized view consumes the stream named after it (materializations/materialized_view) -#}
  {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.config.materialized == 'materialized_view' -%}
    {%- do consumers.update({node.unique_id: [node.name]}) -%}
  {%- endfor -%}
  {{ return(consumers) }}
{%- endmacro %}


{#- The project's stream_incremental models (see spark_streams__stream_consumers). -#}
{% macro spark_streams__project_consumers() -%}
  {{ return(spark_streams__stream_consumers().keys() | list) }}
{%- endmacro %}

{#- The dbt name of the source table or model (`node`, spark_streams__node_of) behind
    `relation` (its identifier if neither): stable when the physical table is renamed and the
    source's identifier follows it. -#}
{% macro spark_streams__relation_label(relation, node) -%}
  {%- for entry in graph.sources.values()
        if entry.schema == relation.schema and entry.identifier == relation.identifier -%}
    {{ return(entry.name) }}
  {%- endfor -%}
  {{ return(node.name if node else relation.identifier) }}
{%- endmacro %}

{#- The project's model, seed or snapshot whose table `relation` is, or none. -#}
{% macro spark_streams__node_of(relation) -%}
  {%- for node in graph.nodes.values()
        if node.resource_type in ['model', 'seed', 'snapshot']
        and node.schema == relation.schema and (node.alias or node.name) == relation.identifier -%}
    {{ return(node) }}
  {%- endfor -%}
  {{ return(none) }}
{%- endmacro %}

{#- A table model (`node`, which the model refs at `relation`) is replaced at each of its runs
    (a new Delta table, whose changes start over), and so is a materialized view that refreshes
    fully (its table carries no definition's fingerprint): a stream consuming either would be
    stale at every run after its first. Refused before anything is read, naming the model and
    what a stream can follow instead. -#}
{% macro spark_streams__refuse_replaced_model(node, relation) -%}
  {%- set refed = node and node.unique_id in model.depends_on.nodes and node.resource_type == 'model' -%}
  {%- if refed and node.config.materialized == 'table' -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": stream() cannot follow " ~ node.name ~ ", a table model: "
        ~ "dbt replaces its table at each run, and a replaced table's changes start over. "
        ~ "Make " ~ node.name ~ " incremental (or stream_incremental), or a view over its "
        ~ "sources, which a stream follows.") }}
  {%- elif refed and node.config.materialized == 'materialized_view'
        and adapter.materialized_view_replaces_table(relation) -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": stream() cannot follow " ~ node.name ~ ", a materialized "
        ~ "view that refreshes fully: it replaces its table at each run, and a replaced "
        ~ "table's changes start over. Let " ~ node.name ~ " refresh incrementally (its result "
        ~ "line says what stops it), or read the streams of its sources instead.") }}
  {%- endif -%}
{%- endmacro %}
