{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select id, name, tier, metadata_action, metadata_isupdate
from {{ stream(source('raw', 'customers')) }}
