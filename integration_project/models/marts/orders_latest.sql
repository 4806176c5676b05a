{{ config(materialized='incremental', incremental_strategy='merge', unique_key='order_id') }}
select o.order_id, o.customer_id, o.status, o.updated_at, r.region
from {{ ref('stg_orders') }} as o
join {{ ref('stg_customers') }} as c on c.customer_id = o.customer_id
left join {{ ref('country_regions') }} as r on r.country = c.country
{% if is_incremental() %}
where o.updated_at > (select coalesce(max(updated_at), timestamp'1900-01-01') from {{ this }})
{% endif %}
