{{ config(materialized='table') }}
select cast(id / 200 as bigint) as bucket, count(*) as orders, sum(amount) as revenue,
       avg(amount) as average
from {{ source('bench', 'orders') }}
group by cast(id / 200 as bigint)
