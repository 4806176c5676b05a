{#-
  A view cannot hold a stream's position: its SQL would read the versions pinned when it was
  created, forever. dbt-spark's view, refused when its SQL holds a stream() call.
-#}
{% macro spark_streams__create_view_as(relation, sql) -%}
  {%- if spark_streams__stream_marker() in sql -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": stream() cannot be used in a view. A view cannot hold a "
        ~ "stream's position: it would show the changes pending when it was created, forever. "
        ~ "Read the stream in a stream_incremental model (it consumes the changes) or peek at "
        ~ "it from a table, test, analysis or `dbt show`.") }}
  {%- endif -%}
  {{ return(spark__create_view_as(relation, sql)) }}
{%- endmacro %}
