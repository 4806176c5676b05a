{#-
  Model contracts on Delta (`contract: {enforced: true}`). dbt-spark creates the table from
  the query, then adds the constraints with ALTER TABLE; Delta refuses to make an existing
  column NOT NULL ("Cannot change nullable column to non-nullable"), so such a build always
  failed. Here the table is created empty with the contract's columns, their NOT NULL and
  every CHECK, and the rows are then written into it: Delta checks each row, and a row that
  breaks a constraint fails the write, which commits nothing.
-#}
{% macro spark_streams__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if temporary or language != 'sql' or not config.get('contract').enforced
        or (config.get('file_format') or 'delta') != 'delta' -%}
    {{ return(spark__create_table_as(temporary, relation, compiled_code, language)) }}
  {%- endif -%}
  {{ get_assert_columns_equivalent(compiled_code) }}
  {%- do spark_streams__create_contract_table(relation, tblproperties_clause()) -%}
  insert into {{ relation }}
  {{ get_select_subquery(compiled_code) }}
{%- endmacro %}


{#- The contract's table, empty: its columns with NOT NULL, then each CHECK (column-level and
    model-level) added while there are no rows to check. `kept`: columns the materialization
    keeps beside the contract's ({name, data_type}; a materialized view's aggregate state). -#}
{% macro spark_streams__create_contract_table(relation, properties, kept=[]) -%}
  {%- set columns = [] -%}
  {%- for name, column in model.columns.items() -%}
    {%- set not_null = column.constraints | selectattr('type', 'equalto', 'not_null') | list -%}
    {%- do columns.append(adapter.quote(name) ~ ' ' ~ column.data_type ~ (' not null' if not_null else '')) -%}
  {%- endfor -%}
  {%- for column in kept -%}
    {%- do columns.append(adapter.quote(column.name) ~ ' ' ~ column.data_type) -%}
  {%- endfor -%}
  {% call statement('create_contract_table') %}
    create or replace table {{ relation }} ({{ columns | join(', ') }})
    using delta
    {{ options_clause() }}
    {{ properties }}
    {{ partition_cols(label="partitioned by") }}
    {{ clustered_cols(label="clustered by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
  {% endcall %}
  {%- for check in spark_streams__contract_checks() -%}
    {% call statement('add_contract_check') %}
      alter table {{ relation }} add constraint {{ adapter.quote(check.name) }} check ({{ check.expression }})
    {% endcall %}
  {%- endfor -%}
{%- endmacro %}


{#- Every CHECK of the contract as {name, expression}; an unnamed one is named after its
    column (or the model) and its position. -#}
{% macro spark_streams__contract_checks() -%}
  {%- set checks = [] -%}
  {%- for name, column in model.columns.items() -%}
    {%- for constraint in column.constraints if constraint.type == 'check' -%}
      {%- do checks.append({'name': constraint.name or (name ~ '_check_' ~ loop.index), 'expression': constraint.expression}) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for constraint in model.constraints if constraint.type == 'check' -%}
    {%- do checks.append({'name': constraint.name or (model.name ~ '_check_' ~ loop.index), 'expression': constraint.expression}) -%}
  {%- endfor -%}
  {{ return(checks) }}
{%- endmacro %}


{#- dbt-spark adds the constraints after the build; they exist from the start here. -#}
{% macro spark_streams__persist_constraints(relation, model) -%}
{%- endmacro %}

