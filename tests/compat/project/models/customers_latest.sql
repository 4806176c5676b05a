{#- dbt's merge strategy over a stream: each key's latest version, deleted keys kept. -#}
{{ config(materialized='stream_incremental', incremental_strategy='merge', unique_key='id') }}
select id, name, tier
from {{ stream(source('raw', 'customers')) }}
where metadata_action = 'INSERT'
