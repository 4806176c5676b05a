{#- dbt's listagg on Spark 4, which has LISTAGG ... WITHIN GROUP (ORDER BY ...) of its own.
    dbt-spark ignores the order (its collect_list predates it). With a limit, the ordered
    values are collected as (sort keys, value) structs, sorted, cut and joined; the keys must
    then all sort one way (all ascending or all descending). -#}
{% macro spark_streams__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
  {%- if not limit_num -%}
    listagg({{ measure }}, {{ delimiter_text }})
    {%- if order_by_clause %} within group ({{ order_by_clause }}){% endif -%}
  {%- else -%}
    {%- set keys = spark_streams__listagg_sort_keys(order_by_clause) -%}
    {%- set ascending = keys | selectattr('descending') | list | length == 0 -%}
    {%- if not ascending and keys | rejectattr('descending') | list | length > 0 -%}
      {% do exceptions.raise_compiler_error("listagg with a limit sorts all its keys one way on Spark; got: " ~ order_by_clause) %}
    {%- endif -%}
    array_join(slice(transform(sort_array(collect_list(struct(
      {%- for key in keys %}{{ key.expression }} as k{{ loop.index }}, {% endfor -%}
      {{ measure }} as v)), {{ 'true' if ascending else 'false' }}), s -> s.v), 1, {{ limit_num }}), {{ delimiter_text }})
  {%- endif -%}
{%- endmacro %}

{#- The keys of `order by a, b desc` as [{expression, descending}]; none without a clause. -#}
{% macro spark_streams__listagg_sort_keys(order_by_clause) -%}
  {%- set keys = [] -%}
  {%- set body = modules.re.sub('(?i)^\\s*order\\s+by\\s+', '', order_by_clause or '') -%}
  {%- for item in body.split(',') if item.strip() -%}
    {%- set match = modules.re.match('(?is)^(.*?)\\s+(asc|desc)\\s*$', item.strip()) -%}
    {%- if match -%}
      {%- do keys.append({'expression': match.group(1), 'descending': match.group(2) | lower == 'desc'}) -%}
    {%- else -%}
      {%- do keys.append({'expression': item.strip(), 'descending': false}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(keys) }}
{%- endmacro %}
