{#- incremental_strategy 'apply_cdc': change events applied to a table of current state
    (streams/cdc/): the events checked, the change set's deletes kept as tombstones, then one
    MERGE of each touched key's newest state, the build's commit. -#}


{% macro stream_apply_cdc_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_apply_cdc_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}


{% macro spark_streams__stream_apply_cdc_sql(source, target, columns, unique_key) -%}
  {{ adapter.apply_cdc_sql(
      node_id=model.unique_id, model_name=model.name, config=config, changes=source,
      target=target, columns=columns) }}
{%- endmacro %}
