{#- dbt run-operation explain_stream --args '{model: orders_by_customer}': the path the model's
    next build would take for each of its streams (for a view stream: what each changed table's
    term reads, and incremental or rebuild, with the estimate), without consuming anything; for
    a materialized view, also how its last build said it refreshes. -#}
{% macro explain_stream(model) %}
  {{ return(adapter.dispatch('explain_stream', 'dbt')(model)) }}
{% endmacro %}

{% macro spark_streams__explain_stream(model) %}
  {%- set found = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
                  | selectattr('name', 'equalto', model) | list -%}
  {%- if found | length == 0 or found[0].config.materialized not in ['stream_incremental', 'materialized_view'] -%}
    {{ exceptions.raise_compiler_error("explain_stream: no stream_incremental or materialized_view model named '" ~ model ~ "' in the project; give a model's name, e.g. --args '{model: my_mirror}'.") }}
  {%- endif -%}
  {%- set node = found[0] -%}
  {%- set target = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
  {%- for line in adapter.explain_stream(node_id=node.unique_id, model_name=node.name, config=node.config, target=target) -%}
    {{ print(line) }}
  {%- endfor -%}
{% endmacro %}
