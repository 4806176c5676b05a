{#- the same feed as a history of tiers (SCD type 2): a login alone updates its version;
    the events are kept beside it, clustered by id at their first compaction -#}
{{ config(materialized='stream_incremental', incremental_strategy='apply_cdc', unique_key='id',
          sequence_by='seq', apply_as_deletes="op = 'D'", cdc_columns=['id', 'tier', 'login'],
          scd_type=2, track_history_columns=['tier']) }}
select * from {{ stream(source('raw', 'customer_events'), mode='append_only') }}
