-- the view a mart is built on: orders joined with their customer, returned orders filtered out
{{ config(materialized='view') }}
select o.id, o.customer_id, o.status, o.amount, o.updated_at, c.name as customer_name, c.region
from {{ source('bench', 'view_orders') }} o
join {{ source('bench', 'view_customers') }} c on o.customer_id = c.id
where o.status != 'returned'
