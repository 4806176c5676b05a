{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select id, amount from {{ stream(source('raw', 'orders'), mode='append_only') }}
