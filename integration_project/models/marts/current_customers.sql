{#- The customers as the history holds them when this dbt invocation started: Teradata's
    CURRENT VALIDTIME over a valid-time table (the period columns are left out). -#}
{{ config(materialized='table') }}
select * from {{ current_valid_time(ref('customers_history')) }}
