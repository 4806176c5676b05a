-- 2. what a user without streams does first: rebuild everything
{{ config(materialized='table') }}
select id, customer_id, status, amount, created_at, updated_at, note
from {{ source('bench', 'orders') }}
