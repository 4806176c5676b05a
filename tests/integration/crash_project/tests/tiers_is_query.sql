{#- The materialized view holds exactly its query over the sources after every build. -#}
{% set query %}
select c.tier, count(*) as customers, count(o.id) as with_order, sum(o.amount) as amount
from {{ source('raw', 'customers') }} c left join {{ source('raw', 'orders') }} o on o.id = c.id
group by c.tier
{% endset %}
(select tier, customers, with_order, amount from {{ ref('tiers') }} except all {{ query }})
union all
({{ query }} except all select tier, customers, with_order, amount from {{ ref('tiers') }})
