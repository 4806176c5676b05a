-- every upsert a version, ending at the key's next event: what apply_cdc scd_type 2 must hold
with chain as (
  select id, amount, op, seq as start_at, lead(seq) over (partition by id order by seq) as end_at
  from (select distinct * from {{ source('raw', 'order_events') }})  -- an event delivered twice is one
),
expected as (select id, amount, start_at, end_at from chain where op != 'D')
(select * from expected except select id, amount, __start_at, __end_at from {{ ref('order_history') }})
union all
(select id, amount, __start_at, __end_at from {{ ref('order_history') }} except select * from expected)
