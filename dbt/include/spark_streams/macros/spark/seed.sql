{#- dbt seed over a seed that exists: on a Delta table whose columns and types are the seed's,
    the rows are replaced in place (TRUNCATE, then dbt's INSERT), as dbt does on other
    warehouses, instead of dbt-spark's drop and create. A dropped table is another table to a
    stream (a new table id), so every stream reading the seed went stale at each `dbt seed` and
    its consumer needed --full-refresh, which throws a `history` model's history away; replaced
    in place, the reload reaches a stream as changes (each old row deleted, each new row
    inserted, netted per key). --full-refresh, a relation that is not Delta, or columns or types
    that differ from the seed's still drop and create the table, as dbt-spark does. -#}
{% macro spark_streams__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
  {%- if not full_refresh and old_relation.is_delta
        and spark_streams__seed_columns(model, agate_table) == spark_streams__table_columns(old_relation) -%}
    {{ adapter.truncate_relation(old_relation) }}
    {{ return("truncate table " ~ old_relation.render()) }}
  {%- endif -%}
  {{ return(spark__reset_csv_table(model, full_refresh, old_relation, agate_table)) }}
{% endmacro %}


{#- The seed's columns as `name type`, lower case, as create_csv_table would create them. -#}
{% macro spark_streams__seed_columns(model, agate_table) %}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set columns = [] -%}
  {%- for col_name in agate_table.column_names -%}
    {%- set type = column_override.get(col_name, adapter.convert_type(agate_table, loop.index0)) -%}
    {%- do columns.append(((col_name | string) ~ ' ' ~ type) | lower) -%}
  {%- endfor -%}
  {{ return(columns) }}
{% endmacro %}


{% macro spark_streams__table_columns(relation) %}
  {%- set columns = [] -%}
  {%- for column in adapter.get_columns_in_relation(relation) -%}
    {%- do columns.append((column.name ~ ' ' ~ column.dtype) | lower) -%}
  {%- endfor -%}
  {{ return(columns) }}
{% endmacro %}
