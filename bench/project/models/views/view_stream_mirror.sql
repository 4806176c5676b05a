-- 1. a standard stream on the view, applied to a mirror (the defaults: the build rebuilds the
--    target instead when the estimate says that is cheaper)
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select id, customer_id, status, amount, updated_at, customer_name, region,
       metadata_action, metadata_isupdate
from {{ stream(ref('orders_customers'), unique_key='id') }}
