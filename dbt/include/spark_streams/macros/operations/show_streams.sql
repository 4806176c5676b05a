{#- dbt run-operation show_streams: one line per stream. -#}
{% macro show_streams() %}
  {{ return(adapter.dispatch('show_streams', 'dbt')()) }}
{% endmacro %}

{% macro spark_streams__show_streams() %}
  {%- set records = adapter.stream_records(spark_streams__project_consumers()) -%}
  {%- if not records -%}
    {{ print('No streams yet: a stream is created by the first build of a stream_incremental model.') }}
  {%- endif -%}
  {%- for record in records | sort(attribute='name') -%}
    {{ print(spark_streams__stream_line(record)) }}
  {%- endfor -%}
{% endmacro %}

{% macro spark_streams__stream_line(record) -%}
  {{- 'name=%s schema=%s source=%s source_type=%s mode=%s consumer=%s owner_gone=%s offset=%s offset_time=%s stale=%s stale_after=%s created_on=%s last_consumed_on=%s' | format(
      record.name, record.schema, record.source_table, record.source_type, record.mode,
      record.consumer, record.owner_gone | string | lower, record.offset_version, record.offset_timestamp,
      record.stale | string | lower, record.stale_after or '-',
      record.created_on, record.last_consumed_on) -}}
{%- endmacro %}
