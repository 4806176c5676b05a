{#- Every version of every customer since the stream began, with the commit times that opened
    and closed it: a type-2 history that, unlike the snapshot beside it, keeps the versions
    committed between two builds too. -#}
{{ config(materialized='stream_incremental', incremental_strategy='history',
          unique_key='customer_id') }}
select customer_id, name, email, country,
       metadata_action, metadata_commit_version, metadata_commit_timestamp
from {{ stream(source('shop', 'customers')) }}
