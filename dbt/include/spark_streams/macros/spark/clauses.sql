{#-
  dbt-spark's table clauses with every configured value as a string literal: dbt-spark pastes
  `tblproperties`, `options`, `location_root` and the description between quotes unescaped, so
  a value holding a quote (`it's`) broke the CREATE, and one holding `'; drop table x; --`
  could end the statement early. Here a value is always one literal (see sql_string_literal),
  whatever it holds, and it is stored as written. The Hudi branch of dbt-spark's options is
  kept out: this adapter builds Delta and Parquet tables.
-#}
{% macro spark_streams__tblproperties_clause() -%}
  {%- set properties = config.get('tblproperties') -%}
  {%- if properties %}
    tblproperties {{ spark_streams__property_list(properties) }}
  {%- endif %}
{%- endmacro %}


{% macro spark_streams__options_clause() -%}
  {%- set options = config.get('options') -%}
  {%- if options %}
    options {{ spark_streams__property_list(options) }}
  {%- endif %}
{%- endmacro %}


{#- `('name' = 'value', ...)`: every name and value one string literal. -#}
{% macro spark_streams__property_list(properties) -%}
  (
  {%- for name, value in properties.items() %}
    {{ adapter.sql_string_literal(name) }} = {{ adapter.sql_string_literal(value) }}{{ ',' if not loop.last }}
  {%- endfor %}
  )
{%- endmacro %}


{% macro spark_streams__location_clause() -%}
  {%- set location_root = config.get('location_root', validator=validation.any[basestring]) -%}
  {%- if location_root is not none %}
    location {{ adapter.sql_string_literal(location_root ~ '/' ~ model['alias']) }}
  {%- endif %}
{%- endmacro %}


{% macro spark_streams__comment_clause() -%}
  {%- set persist_docs = config.get('persist_docs', {}) -%}
  {%- if persist_docs is mapping -%}
    {%- if persist_docs.get('relation', false) %}
    comment {{ adapter.sql_string_literal(model.description) }}
    {%- endif %}
  {%- elif persist_docs -%}
    {{ exceptions.raise_compiler_error("Invalid value provided for 'persist_docs'. Expected dict but got value: " ~ persist_docs) }}
  {%- endif %}
{%- endmacro %}
