{#- A materialized view with an aggregate over an outer join: customers whose tier changes,
    who come and go, left-joined to orders that keep arriving. -#}
{{ config(materialized='materialized_view') }}
select c.tier, count(*) as customers, count(o.id) as with_order, sum(o.amount) as amount
from {{ source('raw', 'customers') }} c left join {{ source('raw', 'orders') }} o on o.id = c.id
group by c.tier
