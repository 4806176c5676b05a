{#-
  A view cannot hold a stream's position: its SQL would read the versions pinned when it was
  created, forever. dbt-spark's view, refused (in Python) when its SQL holds a stream() call
  or a changes() call that ends at the build's state, or longer than a Derby metastore stores.
-#}
{% macro spark_streams__create_view_as(relation, sql) -%}
  {%- do adapter.refuse_stream_in_view(model_name=model.name, sql=sql) -%}
  {%- do adapter.refuse_view_derby_cannot_store(sql=sql) -%}
  {{ return(spark__create_view_as(relation, sql)) }}
{%- endmacro %}
