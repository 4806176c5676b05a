-- 2. without streams: the view rebuilt into a table
{{ config(materialized='table') }}
select id, customer_id, status, amount, updated_at, customer_name, region
from {{ ref('orders_customers') }}
