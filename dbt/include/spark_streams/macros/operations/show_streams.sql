{#- dbt run-operation show_streams: an aligned table, one row per stream;
    --args '{format: json}' prints one JSON object per stream instead. -#}
{% macro show_streams(format='table') %}
  {{ return(adapter.dispatch('show_streams', 'dbt')(format)) }}
{% endmacro %}

{% macro spark_streams__show_streams(format='table') %}
  {%- set records = adapter.stream_records(project_consumers=spark_streams__project_consumers()) | sort(attribute='name') -%}
  {%- set shown = adapter.format_streams(streams=records, output_format=format) -%}
  {%- if not records and format == 'table' -%}
    {{ print('No streams yet: a stream is created by the first build of a stream_incremental model.') }}
  {%- elif records -%}
    {{ print(shown) }}
  {%- endif -%}
{% endmacro %}
