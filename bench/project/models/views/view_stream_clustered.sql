-- 1'. the same stream for the clustered layout: the mirror clustered by customer, as orders
--     are, and its MERGE matched through the change set's customer ranges
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id', liquid_clustered_by='customer_id', key_ranges=true) }}
select id, customer_id, status, amount, updated_at, customer_name, region,
       metadata_action, metadata_isupdate
from {{ stream(ref('orders_customers'), unique_key='id', name='view_stream_clustered') }}
