{{ config(materialized='materialized_view') }}
select cast(id / 200 as bigint) as bucket, min(amount) as lowest, max(amount) as highest,
       count(*) as orders
from {{ source('bench', 'orders') }}
group by cast(id / 200 as bigint)
