{{ config(materialized='stream_incremental', incremental_strategy='history', unique_key='id') }}
select id, name, tier, metadata_action, metadata_commit_version, metadata_commit_timestamp
from {{ stream(source('raw', 'customers')) }}
