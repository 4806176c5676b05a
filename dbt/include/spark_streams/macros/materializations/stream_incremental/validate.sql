{#- The strategy, checked before anything runs. -#}
{% macro spark_streams__stream_strategy() %}
  {%- set strategy = config.get('incremental_strategy') or 'apply_changes' -%}
  {%- set accepted = ['append', 'merge', 'apply_changes'] -%}
  {%- if strategy not in accepted -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": incremental_strategy '" ~ strategy ~ "' is not supported by "
        ~ "stream_incremental; use one of " ~ accepted | join(', ') ~ ".") }}
  {%- endif -%}
  {%- if strategy in ['merge', 'apply_changes'] and not config.get('unique_key') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": incremental_strategy '" ~ strategy ~ "' needs a unique_key; "
        ~ "add config(unique_key='...') or use incremental_strategy='append'.") }}
  {%- endif -%}
  {{ return(strategy) }}
{% endmacro %}


{#- Columns the target keeps: all output columns, less stream metadata for apply_changes. -#}
{% macro spark_streams__stream_target_columns(output_columns, strategy) %}
  {%- set metadata = ['metadata_action', 'metadata_isupdate', 'metadata_row_id', 'metadata_commit_version', 'metadata_commit_timestamp'] -%}
  {%- set lowered = output_columns | map('lower') | list -%}
  {%- set keys = config.get('unique_key') -%}
  {%- set keys = [keys] if keys is string else (keys or []) -%}
  {%- for key in keys if key | lower not in lowered -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": unique_key column '" ~ key ~ "' is not in the model's output ("
        ~ output_columns | join(', ') ~ "). Select it from the stream.") }}
  {%- endfor -%}
  {%- if strategy != 'apply_changes' or config.get('keep_metadata_columns', false) -%}
    {{ return(output_columns) }}
  {%- endif -%}
  {%- for needed in ['metadata_action', 'metadata_isupdate'] if needed not in lowered -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": incremental_strategy 'apply_changes' needs the stream's "
        ~ needed ~ " column in the model's output. Select it from the stream.") }}
  {%- endfor -%}
  {{ return(output_columns | reject('in', metadata) | list) }}
{% endmacro %}
