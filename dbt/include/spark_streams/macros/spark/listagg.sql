{#- dbt's listagg on Spark 4, which has LISTAGG ... WITHIN GROUP (ORDER BY ...) of its own.
    dbt-spark ignores the order (its collect_list predates it). With a limit, the ordered
    values are collected as (sort keys, value) structs, sorted, cut and joined; the keys must
    then all sort one way (all ascending or all descending), which the adapter checks. -#}
{% macro spark_streams__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
  {%- if not limit_num -%}
    listagg({{ measure }}, {{ delimiter_text }})
    {%- if order_by_clause %} within group ({{ order_by_clause }}){% endif -%}
  {%- else -%}
    {%- set keys = adapter.listagg_sort_keys(order_by_clause=order_by_clause) -%}
    {%- set ascending = keys | selectattr('descending') | list | length == 0 -%}
    array_join(slice(transform(sort_array(collect_list(struct(
      {%- for key in keys %}{{ key.expression }} as k{{ loop.index }}, {% endfor -%}
      {{ measure }} as v)), {{ 'true' if ascending else 'false' }}), s -> s.v), 1, {{ limit_num }}), {{ delimiter_text }})
  {%- endif -%}
{%- endmacro %}
