{#- The materialized view holds exactly what the table mart recomputes, after every build. -#}
{% set columns = 'customer_id, name, country, orders, revenue' %}
(select {{ columns }} from {{ ref('revenue_by_customer') }}
 except all select {{ columns }} from {{ ref('customer_revenue') }})
union all
(select {{ columns }} from {{ ref('customer_revenue') }}
 except all select {{ columns }} from {{ ref('revenue_by_customer') }})
