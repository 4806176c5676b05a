{#- The current rows of the history are the source's rows: no build changes the source. -#}
(select customer_id, name, email, country from {{ source('shop', 'customers') }}
 except all
 select customer_id, name, email, country from {{ ref('current_customers') }})
union all
(select customer_id, name, email, country from {{ ref('current_customers') }}
 except all
 select customer_id, name, email, country from {{ source('shop', 'customers') }})
