{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc', unique_key='id',
          sequence_by='seq', apply_as_deletes="op = 'D'", cdc_except_columns=['op'],
          scd_type=2) }}
select * from {{ stream(source('bench', 'cdc_events'), mode='append_only') }}
