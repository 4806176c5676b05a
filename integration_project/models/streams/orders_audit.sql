{#- Every order ever placed, as placed: an append-only stream appended to a log. -#}
{{ config(materialized='stream_incremental', incremental_strategy='append') }}
select order_id, customer_id, status, ordered_at, metadata_commit_version, metadata_commit_timestamp
from {{ stream(source('shop', 'orders'), mode='append_only', unique_key='order_id') }}
