{#-
  A generic test on a stream-consuming model: fails when any of its streams is stale or goes
  stale within error_after_hours, warns when it goes stale within warn_after_hours.

    models:
      - name: customers_mirror
        data_tests:
          - stream_fresh:
              arguments: {warn_after_hours: 48, error_after_hours: 12}

  Each failing row names the stream, its level and why. The test's result is an error when
  any row is an error and a warning otherwise (fail_calc gives 2 for an error, 1 for a
  warning; warn_if / error_if read it).
-#}
{% test stream_fresh(model, warn_after_hours=none, error_after_hours=none) %}
  {{ config(
      fail_calc="coalesce(max(case when level = 'error' then 2 else 1 end), 0)",
      warn_if='>= 1',
      error_if='>= 2') }}
  {%- set failures = adapter.stream_freshness(
      relation=model, warn_after_hours=warn_after_hours, error_after_hours=error_after_hours) if execute else [] -%}
  {%- if failures %}
  select * from values
    {%- for failure in failures %}
    ({{ adapter.sql_string_literal(failure.stream) }}, {{ adapter.sql_string_literal(failure.level) }}, {{ adapter.sql_string_literal(failure.reason) }}){{ ',' if not loop.last }}
    {%- endfor %}
  as failures(stream, level, reason)
  {%- else %}
  select cast(null as string) as stream, cast(null as string) as level, cast(null as string) as reason
  where false
  {%- endif %}
{% endtest %}
