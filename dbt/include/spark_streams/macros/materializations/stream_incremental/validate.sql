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
  {% do spark_streams__validate_stream_config() %}
  {{ return(strategy) }}
{% endmacro %}


{#- Config values with a fixed set of answers: an unknown one is an error, not a default. -#}
{% macro spark_streams__validate_stream_config() %}
  {%- set on_schema_change = config.get('on_schema_change') -%}
  {%- set accepted = ['ignore', 'append_new_columns', 'sync_all_columns', 'fail'] -%}
  {%- if on_schema_change is not none and on_schema_change not in accepted -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": on_schema_change '" ~ on_schema_change ~ "' is not one of "
        ~ accepted | join(', ') ~ ".") }}
  {%- endif -%}
  {% do spark_streams__file_rows() %}
  {%- for flag in ['keep_metadata_columns', 'auto_enable_change_tracking'] -%}
    {%- set value = config.get(flag) -%}
    {%- if value is not none and value is not boolean -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model.name ~ ": " ~ flag ~ " must be true or false, not '" ~ value ~ "'.") }}
    {%- endif -%}
  {%- endfor -%}
{% endmacro %}


{#- Columns the target keeps: all output columns, less stream metadata for apply_changes. -#}
{% macro spark_streams__stream_target_columns(output_columns, strategy) %}
  {%- set metadata = ['metadata_action', 'metadata_isupdate', 'metadata_row_id', 'metadata_commit_version', 'metadata_commit_timestamp'] -%}
  {%- set lowered = output_columns | map('lower') | list -%}
  {%- for key in spark_streams__unique_keys() if key | lower not in lowered -%}
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


{#- file_rows: the most rows a file of the target holds (0: as Spark writes them). -#}
{% macro spark_streams__file_rows() %}
  {%- set value = config.get('file_rows', 100000) -%}
  {%- if value is not number or value is boolean or value < 0 or value != value | int -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": file_rows must be a whole number of rows (0 for no cap), "
        ~ "not '" ~ value ~ "'.") }}
  {%- endif -%}
  {{ return(value | int) }}
{% endmacro %}
