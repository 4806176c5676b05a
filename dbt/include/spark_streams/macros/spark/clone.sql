{#- dbt clone on Delta: `create or replace table ... shallow clone`. Open-source Delta refuses
    to clone over a table that holds rows (DELTA_UNSUPPORTED_NON_EMPTY_CLONE, so a second
    `dbt clone --full-refresh` failed); its own error asks to empty the table first. The DELETE
    and the clone are two commits: the clone's history keeps the rows before both, and
    `RESTORE TABLE ... TO VERSION AS OF` brings them back should the clone fail. -#}
{% macro spark_streams__create_or_replace_clone(this_relation, defer_relation) -%}
  {%- set existing = adapter.get_relation(this_relation.database, this_relation.schema, this_relation.identifier) -%}
  {%- if existing is not none and existing.is_table and existing.is_delta -%}
    {% do run_query('delete from ' ~ this_relation) %}
  {%- endif -%}
  create or replace table {{ this_relation }} shallow clone {{ defer_relation }}
{%- endmacro %}
