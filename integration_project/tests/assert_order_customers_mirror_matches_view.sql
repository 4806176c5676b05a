{#- The mirror of the view holds exactly the view's rows after every build. -#}
{% set columns = 'order_id, status, customer_id, name, country' %}
(select {{ columns }} from {{ ref('order_customers_mirror') }}
 except all select {{ columns }} from {{ ref('stg_order_customers') }})
union all
(select {{ columns }} from {{ ref('stg_order_customers') }}
 except all select {{ columns }} from {{ ref('order_customers_mirror') }})
