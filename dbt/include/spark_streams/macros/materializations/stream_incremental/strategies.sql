{#-
  The write statement of an incremental stream build: one macro per strategy, named
  stream_<strategy>_sql. The materialization finds it by name in the model's context, the way
  dbt finds get_incremental_<strategy>_sql, and each dispatches, so a project overrides one
  with spark_streams__stream_merge_sql (or stream_merge_sql) in its own macros. A new strategy
  is one more pair here plus its name in streams/builds/config.py. Each takes the change set
  (a temporary view), the target, the columns to write and the model's unique_key (a list,
  empty without one).
-#}

{% macro stream_append_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_append_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}

{% macro stream_merge_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_merge_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}

{% macro stream_apply_changes_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_apply_changes_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}

{% macro stream_apply_deletes_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_apply_deletes_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}

{% macro stream_history_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_history_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}


{% macro spark_streams__stream_append_sql(source, target, columns, unique_key) -%}
  insert into {{ target }} ({{ get_quoted_csv(columns) }})
  select {{ get_quoted_csv(columns) }} from {{ source }}
{%- endmacro %}


{% macro spark_streams__stream_merge_sql(source, target, columns, unique_key) -%}
  merge into {{ target }} as t
  using {{ source }} as s
  on {{ spark_streams__key_match(unique_key) }}{{ spark_streams__key_ranges(source, target, unique_key) }}
  when matched then update set {{ spark_streams__set_columns(columns) }}
  when not matched then insert ({{ get_quoted_csv(columns) }})
    values ({{ spark_streams__prefixed_columns('s', columns) }})
{%- endmacro %}


{#- A mirror: DELETEs that are not half of an update remove the key, INSERTs upsert it. -#}
{% macro spark_streams__stream_apply_changes_sql(source, target, columns, unique_key) -%}
  merge into {{ target }} as t
  using (select * from {{ source }} where not (metadata_action = 'DELETE' and metadata_isupdate)) as s
  on {{ spark_streams__key_match(unique_key) }}{{ spark_streams__key_ranges(source, target, unique_key) }}
  when matched and s.metadata_action = 'DELETE' then delete
  when matched then update set {{ spark_streams__set_columns(columns) }}
  when not matched and s.metadata_action = 'INSERT' then insert ({{ get_quoted_csv(columns) }})
    values ({{ spark_streams__prefixed_columns('s', columns) }})
{%- endmacro %}


{#-
  A mirror whose sources only lost rows since its offsets (streams/delta/appends.py): the change set
  holds only DELETEs, and a MERGE with only its delete clause finds their rows with an inner
  join (a MERGE that may insert needs an outer one).
-#}
{% macro spark_streams__stream_apply_deletes_sql(source, target, columns, unique_key) -%}
  merge into {{ target }} as t
  using (select * from {{ source }} where metadata_action = 'DELETE') as s
  on {{ spark_streams__key_match(unique_key) }}{{ spark_streams__key_ranges(source, target, unique_key) }}
  when matched then delete
{%- endmacro %}


{#-
  A type-2 history: each version of a key in the change set becomes a row with its period,
  and the key's open row in the target is closed at the key's first new event. One MERGE, so
  one commit: the closing rows match the open rows, the versions never match and are inserted.
-#}
{% macro spark_streams__stream_history_sql(source, target, columns, unique_key) -%}
  {%- set history = adapter.stream_consumer(model.name, config).history -%}
  {%- set existing = adapter.get_columns_in_relation(target) | map(attribute='name') | map('lower') | list -%}
  {%- if history.valid_from | lower not in existing or history.valid_to | lower not in existing -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": the target " ~ target ~ " has no " ~ history.valid_from ~ " / "
        ~ history.valid_to ~ " columns, so it was not built by incremental_strategy 'history' "
        ~ "(or with other valid_from_column / valid_to_column names). Rebuild it with --full-refresh.") }}
  {%- endif -%}
  {%- set valid_to = adapter.quote(history.valid_to) -%}
  {%- set written = columns + [history.valid_from, history.valid_to] -%}
  {%- set ranges = spark_streams__key_ranges(source, target, unique_key) -%}
  merge into {{ target }} as t
  using (
    {{ spark_streams__history_rows(source, target, columns, unique_key, history, ranges) }}
  ) as s
  on {{ spark_streams__key_match(unique_key) }}{{ ranges }} and t.{{ valid_to }} is null and s._closes
  when matched then update set t.{{ valid_to }} = s.{{ valid_to }}
  when not matched and not s._closes then insert ({{ get_quoted_csv(written) }})
    values ({{ spark_streams__prefixed_columns('s', written) }})
{%- endmacro %}


{#-
  The rows a history build writes, from `source` (the model's rows: versions with their
  metadata_action, metadata_commit_version and metadata_commit_timestamp): one per INSERT
  event, valid from its commit time to the commit time of the key's next event (a newer
  version or a DELETE; null while current), and with a target (not on a first build) one
  closing row per key, `_closes`, carrying the time of the key's first new event. With
  history_track_columns a version whose tracked columns equal the key's previous version
  (in the change set, or the target's open row) is not a new version.
-#}
{% macro spark_streams__history_rows(source, target, columns, unique_key, history, ranges='') -%}
  {%- set keys = get_quoted_csv(unique_key) -%}
  {%- set tracked = 'to_json(struct(' ~ get_quoted_csv(history.track) ~ '))' -%}
  {%- set compares_current = history.track and target is not none -%}
  with _events as (
    select {{ get_quoted_csv(columns) }}, metadata_action as _action,
           metadata_commit_version as _version, metadata_commit_timestamp as _at,
           false as _current
    from {{ source }}
    {%- if compares_current %}
    union all
    select {{ spark_streams__prefixed_columns('t', columns) }}, 'INSERT', -1,
           t.{{ adapter.quote(history.valid_from) }}, true
    from {{ target }} as t left semi join {{ source }} as s on {{ spark_streams__key_match(unique_key) }}
    where t.{{ adapter.quote(history.valid_to) }} is null{{ ranges }}
    {%- endif %}
  ), _kept as (
    {%- if history.track %}
    select * from (
      select *, lag(_action) over _key as _before, lag({{ tracked }}) over _key as _was
      from _events window _key as (partition by {{ keys }} order by _version, _action = 'INSERT')
    ) where not (_action = 'INSERT' and _before = 'INSERT' and _was <=> {{ tracked }})
    {%- else %}
    select * from _events
    {%- endif %}
  ), _periods as (
    select *, lead(_at) over _key as _next,
           row_number() over (partition by {{ keys }}, _current order by _version, _action = 'INSERT') as _nth
    from _kept window _key as (partition by {{ keys }} order by _version, _action = 'INSERT')
  )
  select {{ get_quoted_csv(columns) }}, _at as {{ adapter.quote(history.valid_from) }},
         _next as {{ adapter.quote(history.valid_to) }}, false as _closes
  from _periods where _action = 'INSERT' and not _current
  {%- if target is not none %}
  union all
  select {{ get_quoted_csv(columns) }}, null, _at, true
  from _periods where not _current and _nth = 1
  {%- endif %}
{%- endmacro %}


{#-
  ` and (t.key between low and high or ...)`: the change set's key ranges, so that Delta reads
  only the target files whose keys they can match (streams/builds/key_ranges.py); '' when the model's
  key_ranges says no (by default: a target under 256 MiB) or its first key column is not an
  integer.
-#}
{% macro spark_streams__key_ranges(source, target, unique_key) -%}
  {%- set setting = adapter.stream_consumer(model.name, config).key_ranges -%}
  {{- adapter.stream_key_ranges(source, target, unique_key, setting) -}}
{%- endmacro %}


{#- t.`k` <=> s.`k` for each key column: null keys match each other, as in the stream. -#}
{% macro spark_streams__key_match(unique_key) -%}
  {%- for key in unique_key -%}
    t.{{ adapter.quote(key) }} <=> s.{{ adapter.quote(key) }}{{ ' and ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{% macro spark_streams__set_columns(columns) -%}
  {%- for c in columns -%}
    t.{{ adapter.quote(c) }} = s.{{ adapter.quote(c) }}{{ ', ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{% macro spark_streams__prefixed_columns(prefix, columns) -%}
  {%- for c in columns -%}
    {{ prefix }}.{{ adapter.quote(c) }}{{ ', ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{#- The target's table properties (deletion vectors on unless the model says otherwise; see
    DEFAULT_TARGET_PROPERTIES in streams/builds/config.py). -#}
{% macro spark_streams__target_tblproperties(consumer) -%}
  tblproperties (
    {%- for name, value in consumer.target_properties.items() %}
    {{ adapter.sql_string_literal(name) }} = {{ adapter.sql_string_literal(value) }}{{ ',' if not loop.last }}
    {%- endfor %}
  )
{%- endmacro %}


{#-
  The first build (and --full-refresh): the target created from the stream's rows, in key
  order when there is a key. With file_rows capping each file, every file then holds one key
  range, and a later MERGE of changes that cluster by key rewrites only a few small files.
  With an enforced contract the target is created empty with the contract's columns and
  constraints (macros/contracts.sql) and the rows are inserted: that INSERT is the commit
  that carries the offsets, and Delta fails it, moving nothing, when a row breaks a constraint.
-#}
{% macro spark_streams__stream_create_sql(relation, sql, consumer, columns) -%}
  {%- if config.get('contract').enforced -%}
    {%- do spark_streams__assert_contract_columns(columns + consumer.history_columns) -%}
    {%- do spark_streams__create_contract_table(relation, spark_streams__target_tblproperties(consumer)) -%}
  insert into {{ relation }} ({{ get_quoted_csv(model.columns.keys() | list) }})
  select {{ get_quoted_csv(model.columns.keys() | list) }} from (
    {{ spark_streams__first_rows(sql, consumer, columns) }}
  )
  {%- else -%}
  create or replace table {{ relation }}
  using delta
  {{ options_clause() }}
  {{ spark_streams__target_tblproperties(consumer) }}
  {{ partition_cols(label="partitioned by") }}
  {{ location_clause() }}
  {{ comment_clause() }}
  as
  {{ spark_streams__first_rows(sql, consumer, columns) }}
  {%- endif -%}
{%- endmacro %}


{#- The target's first rows: the stream's inserts, its history periods, or all of it. -#}
{% macro spark_streams__first_rows(sql, consumer, columns) -%}
  {%- if consumer.first_build_inserts_only %}
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
