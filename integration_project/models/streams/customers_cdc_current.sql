{#- The customers' Debezium feed (JSON files of change envelopes, landed by a connector)
    applied by key and sequence: each customer's current state. The model does not flatten the
    envelope; cdc_format does. -#}
{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc',
          unique_key='customer_id', cdc_format='debezium', sequence_by='struct(ts_ms, source.lsn)') }}
select * from {{ stream(source('shop', 'customer_cdc'), mode='insert_only') }}
