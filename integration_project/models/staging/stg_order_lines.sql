{{ config(materialized='ephemeral') }}
select order_id, line_no, sku, quantity, unit_price, quantity * unit_price as line_total
from {{ source('shop', 'order_items') }}
