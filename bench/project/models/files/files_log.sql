{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select id, customer_id, kind, amount, at
from {{ stream(source('bench', 'landing_events'), mode='insert_only') }}
