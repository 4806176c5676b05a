{#-
  changes(relation, at, before, end, information, unique_key)
  The change records between two states of a Delta table, netted as a stream's are; read-only,
  so it works in any model, test, snapshot, analysis or `dbt show` (streams/travel/changes.py).
-#}
{% macro changes(relation, at=none, before=none, end=none, information='default', unique_key=none) -%}
  {{ return(adapter.dispatch('changes', 'dbt')(relation, at, before, end, information, unique_key)) }}
{%- endmacro %}


{% macro spark_streams__changes(relation, at, before, end, information, unique_key) -%}
  {#- At parse time ref()/source() only register the edge; nothing is read. -#}
  {%- if not execute -%}
    {{ return(relation) }}
  {%- endif -%}
  {%- if model.resource_type == 'unit_test' -%}
    {{ return(adapter.fixture_stream_sql(model.unique_id, relation, unique_key)) }}
  {%- endif -%}
  {%- set options = {
      'at': at,
      'before': before,
      'end': end,
      'information': information,
      'unique_key': unique_key,
      'empty': relation.limit == 0,
  } -%}
  {{ return(adapter.changes_sql(node_id=model.unique_id, source=relation, options=options)) }}
{%- endmacro %}
