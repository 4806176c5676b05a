{#- a feed of change events applied as the current state (SCD type 1) -#}
{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc', unique_key='id',
          sequence_by='seq', apply_as_deletes="op = 'D'", cdc_columns=['id', 'tier', 'login']) }}
select * from {{ stream(source('raw', 'customer_events'), mode='append_only') }}
