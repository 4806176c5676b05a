{#- Orders with their customer: a view over two views, which a stream can follow (a view of
    projections, filters, inner joins and UNION ALL; see the README's Streams on views). -#}
select o.order_id, o.status, c.customer_id, c.name, c.country
from {{ ref('stg_orders') }} o
join {{ ref('stg_customers') }} c on o.customer_id = c.customer_id
