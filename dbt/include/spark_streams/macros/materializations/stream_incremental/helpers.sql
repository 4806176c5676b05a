{#- What the strategies' statements share: the key match, the key ranges, column lists. -#}


{#-
  ` and (t.key between low and high or ...)`: the change set's key ranges (a mirror clustered by
  another column: that column's), so that Delta reads
  only the target files whose keys they can match (streams/records/key_ranges.py); '' when the model's
  key_ranges says no (by default: a target under 256 MiB) or its first key column is not an
  integer.
-#}
{% macro spark_streams__key_ranges(source, target, unique_key) -%}
  {{- adapter.stream_key_ranges(
      changes=source, target=target, unique_key=unique_key, consumer=spark_streams__consumer(),
      node_id=model.unique_id) -}}
{%- endmacro %}


{#- The model's stream_incremental config, checked and parsed once per build (in Python,
    streams/builds/config.py): what a strategy reads beyond its arguments. -#}
{% macro spark_streams__consumer() -%}
  {{ return(adapter.stream_consumer(node_id=model.unique_id, model_name=model.name, config=config)) }}
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
