-- 1. a standard stream applied to a mirror
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select id, customer_id, status, amount, created_at, updated_at, note,
       metadata_action, metadata_isupdate
from {{ stream(source('bench', 'orders')) }}
