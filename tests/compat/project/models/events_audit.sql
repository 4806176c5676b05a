{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select id, kind from {{ stream(source('raw', 'events'), mode='insert_only') }}
