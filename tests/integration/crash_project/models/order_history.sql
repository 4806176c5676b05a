{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc', unique_key='id',
          sequence_by='seq', apply_as_deletes="op = 'D'", scd_type=2, cdc_columns=['id', 'amount'],
          track_history_except_columns=['amount']) }}
select * from {{ stream(source('raw', 'order_events'), mode='append_only') }}
