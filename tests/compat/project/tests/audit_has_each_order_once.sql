select id, count(*) as copies from {{ ref('orders_audit') }} group by id having count(*) <> 1
union all
select id, 0 from {{ source('raw', 'orders') }}
where id not in (select id from {{ ref('orders_audit') }})
