{#- A peek at the mirror's stream: what its next build would apply. Consumes nothing. -#}
-- depends_on: {{ ref('customers_mirror') }}
{{ config(materialized='table') }}
select *
from {{ stream(source('shop', 'customers'), name='customers_mirror__customers',
               unique_key='customer_id') }}
