{#- dbt run-operation describe_stream --args '{name: member_check}' -#}
{% macro describe_stream(name) %}
  {{ return(adapter.dispatch('describe_stream', 'dbt')(name)) }}
{% endmacro %}

{#- A view stream's offsets are its table streams' (`<name>@<schema>.<table>`): listed after it. -#}
{% macro spark_streams__describe_stream(name) %}
  {%- set records = adapter.stream_records(spark_streams__project_consumers()) -%}
  {%- set found = records | selectattr('name', 'equalto', name) | list -%}
  {%- if not found -%}
    {{ exceptions.raise_compiler_error("No stream named '" ~ name ~ "'. Run `dbt run-operation show_streams` to list the streams.") }}
  {%- endif -%}
  {%- for key, value in found[0].items() -%}
    {{ print('%-18s %s' | format(key, value)) }}
  {%- endfor -%}
  {%- for record in records if record.name.startswith(name ~ '@') -%}
    {{ print('%-18s %s version %s (%s) stale=%s' | format('table offset', record.source_table, record.offset_version, record.offset_timestamp, record.stale | lower)) }}
  {%- endfor -%}
{% endmacro %}
