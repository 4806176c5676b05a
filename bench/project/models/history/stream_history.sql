-- the history strategy on the same stream source as stream_mirror (make bench-history)
{{ config(materialized='stream_incremental', incremental_strategy='history', unique_key='id') }}
select id, customer_id, status, amount, created_at, updated_at, note,
       metadata_action, metadata_commit_version, metadata_commit_timestamp
from {{ stream(source('bench', 'orders')) }}
