select order_id, customer_id, status, ordered_at, updated_at
from {{ source('shop', 'orders') }}
