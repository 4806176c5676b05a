{#- The first build and --full-refresh: the target created from the stream's rows. -#}


{#- The target's table properties (deletion vectors on unless the model says otherwise; see
    DEFAULT_TARGET_PROPERTIES in streams/builds/config.py). -#}
{% macro spark_streams__target_tblproperties(consumer) -%}
  tblproperties {{ spark_streams__property_list(consumer.target_properties) }}
{%- endmacro %}


{#-
  The first build (and --full-refresh): the target created from the stream's rows, in key
  order when there is a key. With file_rows capping each file, every file then holds one key
  range, and a later MERGE of changes that cluster by key rewrites only a few small files.
  With an enforced contract the target is created empty with the contract's columns and
  constraints (macros/spark/contracts.sql), and `kept` columns beside them (a materialized
  view's aggregate state, {name, data_type}) and the rows are inserted: that INSERT is the commit
  that carries the offsets, and Delta fails it, moving nothing, when a row breaks a constraint.
-#}
{% macro spark_streams__stream_create_sql(relation, sql, consumer, columns, kept=[]) -%}
  {%- if config.get('contract').enforced -%}
    {%- do adapter.check_contract_columns(
        model_name=model.name, target_columns=columns + consumer.history_columns,
        contract_columns=model.columns.keys() | list) -%}
    {%- do spark_streams__create_contract_table(relation, spark_streams__target_tblproperties(consumer), kept) -%}
    {%- set written = (model.columns.keys() | list) + (kept | map(attribute='name') | list) -%}
  insert into {{ relation }} ({{ get_quoted_csv(written) }})
  select {{ get_quoted_csv(written) }} from (
    {{ spark_streams__first_rows(sql, consumer, columns) }}
  )
  {%- else -%}
  create or replace table {{ relation }}
  using delta
  {{ options_clause() }}
  {{ spark_streams__target_tblproperties(consumer) }}
  {{ partition_cols(label="partitioned by") }}
  {%- if consumer.cluster_by %}
  cluster by ({{ get_quoted_csv(consumer.cluster_by | list) }})
  {%- endif %}
  {{ location_clause() }}
  {{ comment_clause() }}
  as
  {{ spark_streams__first_rows(sql, consumer, columns) }}
  {%- endif -%}
{%- endmacro %}


{#-
  A rebuild (spark_streams__stream_create_sql's statement), except where the plan keeps the
  table (plan.keeps_table: a rebuild the estimate chose, or one that recreates the streams, of
  an existing Delta target the run did not ask to replace) and its rows have the table's
  columns: then they overwrite the table's rows. CREATE OR REPLACE would give the table a new
  Delta table id, and every stream that follows this target would be stale from then on. The
  overwrite keeps the table, its properties and constraints; its change feed is the old rows
  deleted and the new ones inserted.
-#}
{% macro spark_streams__stream_rebuild_sql(relation, sql, consumer, columns, plan, existing, kept=[]) -%}
  {%- if plan.keeps_table -%}
    {%- set rows_sql = spark_streams__first_rows(sql, consumer, columns) -%}
    {%- set names = get_columns_in_query(rows_sql) | list -%}
    {%- set target_names = adapter.get_columns_in_relation(existing) | map(attribute='name') | list -%}
    {%- if names | map('lower') | sort | list == target_names | map('lower') | sort | list -%}
      {{- return('insert overwrite table ' ~ relation ~ ' (' ~ get_quoted_csv(names) ~ ')\n' ~ rows_sql) -}}
    {%- endif -%}
  {%- endif -%}
  {{- return(spark_streams__stream_create_sql(relation, sql, consumer, columns, kept)) -}}
{%- endmacro %}


{#- The target's first rows: the stream's inserts, its history periods, or all of it. -#}
{% macro spark_streams__first_rows(sql, consumer, columns) -%}
  {%- if consumer.cdc %}
  {{ adapter.apply_cdc_first_sql(
      node_id=model.unique_id, model_name=model.name, config=config, sql=sql, target=this,
      columns=columns) }}
  {%- elif consumer.first_build_inserts_only %}
  select {{ get_quoted_csv(columns) }}
  from (
    {{ sql }}
  ) where metadata_action = 'INSERT'
  {%- elif consumer.keeps_history %}
  select {{ get_quoted_csv(columns + consumer.history_columns) }}
  from (
    {{ spark_streams__history_rows('(' ~ sql ~ ')', none, columns, consumer.unique_key, consumer.history) }}
  )
  {%- else %}
  select * from (
    {{ sql }}
  )
  {%- endif %}
  {%- if consumer.first_build_order %}
  order by {{ get_quoted_csv(consumer.first_build_order) }}
  {%- endif %}
{%- endmacro %}
