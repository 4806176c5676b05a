select c.customer_id, c.name, c.country, count(distinct o.order_id) as orders,
       coalesce(sum(l.line_total), 0) as revenue
from {{ ref('stg_customers') }} as c
left join {{ ref('stg_orders') }} as o on o.customer_id = c.customer_id
left join {{ ref('stg_order_lines') }} as l on l.order_id = o.order_id
group by c.customer_id, c.name, c.country
