{#- A mirror of a view: each build applies the changes of the view's rows since the last one,
    computed from the changes of the two tables under it. key_ranges=true: as in
    customers_history. -#}
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='order_id', key_ranges=true) }}
select order_id, status, customer_id, name, country, metadata_action, metadata_isupdate
from {{ stream(ref('stg_order_customers'), unique_key='order_id') }}
