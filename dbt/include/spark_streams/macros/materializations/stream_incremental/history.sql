{#- incremental_strategy 'history': a valid-time (type-2) table of every version of each key. -#}


{% macro stream_history_sql(source, target, columns, unique_key) -%}
  {{ return(adapter.dispatch('stream_history_sql', 'dbt')(source, target, columns, unique_key)) }}
{%- endmacro %}


{#-
  A type-2 history: each version of a key in the change set becomes a row with its period,
  and the key's open row in the target is closed at the key's first new event. One MERGE, so
  one commit: the closing rows match the open rows, the versions never match and are inserted.
-#}
{% macro spark_streams__stream_history_sql(source, target, columns, unique_key) -%}
  {%- set consumer = spark_streams__consumer() -%}
  {%- do adapter.check_stream_target(consumer=consumer, target=target) -%}
  {%- set history = consumer.history -%}
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
