{#- The apply_changes mirror holds exactly the source's rows after every build. -#}
-- depends_on: {{ ref('customers_mirror') }}
(select customer_id, name, email, country, updated_at from {{ source('shop', 'customers') }}
 except all
 select customer_id, name, email, country, updated_at from {{ ref('customers_mirror') }})
union all
(select customer_id, name, email, country, updated_at from {{ ref('customers_mirror') }}
 except all
 select customer_id, name, email, country, updated_at from {{ source('shop', 'customers') }})
