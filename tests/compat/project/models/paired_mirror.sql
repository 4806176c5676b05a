{#- A stream on a view: its mirror equals the view after every build. -#}
{{ config(materialized='stream_incremental',
          incremental_strategy='apply_changes', unique_key='id') }}
select * from {{ stream(ref('paired'), unique_key='id') }}
