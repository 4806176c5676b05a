{#- dbt run-operation drop_stream --args '{name: orders_mirror__orders}'
    Removes a stream whose consumer has left the project; the source is untouched. -#}
{% macro drop_stream(name) %}
  {{ return(adapter.dispatch('drop_stream', 'dbt')(name)) }}
{% endmacro %}

{% macro spark_streams__drop_stream(name) %}
  {%- set dropped = adapter.drop_stream(name=name, project_consumers=spark_streams__project_consumers()) -%}
  {{ print('Dropped stream %s (source %s, offset %s, consumer %s, no longer in the project). The source is untouched.' | format(
      dropped.name, dropped.source_table, dropped.offset_version, dropped.consumer)) }}
{% endmacro %}
