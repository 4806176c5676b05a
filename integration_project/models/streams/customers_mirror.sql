{#- A mirror of the raw customers: each build applies exactly the changes since the last one. -#}
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='customer_id') }}
select customer_id, name, email, country, updated_at, metadata_action, metadata_isupdate
from {{ stream(source('shop', 'customers')) }}
