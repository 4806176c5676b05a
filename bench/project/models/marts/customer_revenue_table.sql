{{ config(materialized='table') }}
select c.customer_id, c.segment, count(o.id) as orders, sum(o.amount) as revenue
from {{ source('bench', 'customers') }} c
left join {{ source('bench', 'orders') }} o on o.customer_id = c.customer_id
group by c.customer_id, c.segment
