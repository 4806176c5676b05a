{#- Every order event, once: an insert-only stream over the landing folder's files. -#}
{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select order_id, event, occurred_at, metadata_row_id, metadata_commit_timestamp as landed_at
from {{ stream(source('shop', 'order_events'), mode='insert_only') }}
