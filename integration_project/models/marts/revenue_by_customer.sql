{#- customer_revenue as a materialized view: each build rewrites only the customers whose
    orders or order lines changed (docs/guides/materialized-views.md). -#}
{{ config(materialized='materialized_view') }}
select c.customer_id, c.name, c.country,
       count(distinct o.order_id) as orders,
       coalesce(sum(i.quantity * i.unit_price), 0) as revenue
from {{ source('shop', 'customers') }} as c
left join {{ source('shop', 'orders') }} as o on o.customer_id = c.customer_id
left join {{ source('shop', 'order_items') }} as i on i.order_id = o.order_id
group by c.customer_id, c.name, c.country
