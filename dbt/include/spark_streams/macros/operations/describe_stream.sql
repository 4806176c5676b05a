{#- dbt run-operation describe_stream --args '{name: member_check}' -#}
{% macro describe_stream(name) %}
  {{ return(adapter.dispatch('describe_stream', 'dbt')(name)) }}
{% endmacro %}

{#- A view stream's offsets are its table streams' (`<name>@<schema>.<table>`): listed after it. -#}
{% macro spark_streams__describe_stream(name) %}
  {%- set described = adapter.describe_stream(name=name, project_consumers=spark_streams__project_consumers()) -%}
  {%- for key, value in described.stream.items() -%}
    {{ print('%-18s %s' | format(key, value)) }}
  {%- endfor -%}
  {%- for record in described.table_offsets -%}
    {{ print('%-18s %s version %s (%s) stale=%s' | format('table offset', record.source_table, record.offset_version, record.offset_timestamp, record.stale | lower)) }}
  {%- endfor -%}
{% endmacro %}
