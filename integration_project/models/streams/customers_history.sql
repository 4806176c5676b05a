{#- Every version of every customer since the stream began, with the commit times that opened
    and closed it: a type-2 history that, unlike the snapshot beside it, keeps the versions
    committed between two builds too. key_ranges=true bounds the MERGE's target by the changed
    keys' ranges, which the adapter does by itself on targets of 256 MiB and more ('auto'). -#}
{{ config(materialized='stream_incremental', incremental_strategy='history',
          unique_key='customer_id', key_ranges=true) }}
select customer_id, name, email, country,
       metadata_action, metadata_commit_version, metadata_commit_timestamp
from {{ stream(source('shop', 'customers')) }}
