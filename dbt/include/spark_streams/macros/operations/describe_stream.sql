{#- dbt run-operation describe_stream --args '{name: member_check}' -#}
{% macro describe_stream(name) %}
  {{ return(adapter.dispatch('describe_stream', 'dbt')(name)) }}
{% endmacro %}

{% macro spark_streams__describe_stream(name) %}
  {%- set found = adapter.stream_records(spark_streams__project_consumers()) | selectattr('name', 'equalto', name) | list -%}
  {%- if not found -%}
    {{ exceptions.raise_compiler_error("No stream named '" ~ name ~ "'. Run `dbt run-operation show_streams` to list the streams.") }}
  {%- endif -%}
  {%- for key, value in found[0].items() -%}
    {{ print('%-18s %s' | format(key, value)) }}
  {%- endfor -%}
{% endmacro %}
