{#- The same feed, every version of each customer (__start_at, __end_at: the sequences that
    opened and closed it). -#}
{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc', scd_type=2,
          unique_key='customer_id', cdc_format='debezium', sequence_by='struct(ts_ms, source.lsn)') }}
select * from {{ stream(source('shop', 'customer_cdc'), mode='insert_only') }}
