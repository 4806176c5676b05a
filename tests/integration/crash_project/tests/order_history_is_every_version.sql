-- what apply_cdc scd_type 2 must hold with no column tracked (track_history_except_columns:
-- amount): a version opens at a key's first event and at the first event after a delete, takes
-- the amount of its newest event, and ends at the key's next delete
with events as (
  select distinct * from {{ source('raw', 'order_events') }}  -- an event delivered twice is one
),
lagged as (
  select *, lag(op) over (partition by id order by seq) as prev_op,
         lag(seq) over (partition by id order by seq) as prev_seq
  from events
),
grouped as (
  select *, sum(if(op = 'D' or prev_seq is null or prev_op = 'D', 1, 0))
              over (partition by id order by seq rows between unbounded preceding and current row) as grp
  from lagged
),
folded as (
  select id, min(seq) as start_at, max_by(amount, seq) as amount, max(op = 'D') as deleted
  from grouped group by id, grp
),
chain as (
  select id, amount, deleted, start_at, lead(start_at) over (partition by id order by start_at) as end_at
  from folded
),
expected as (select id, amount, start_at, end_at from chain where not deleted)
(select * from expected except select id, amount, __start_at, __end_at from {{ ref('order_history') }})
union all
(select id, amount, __start_at, __end_at from {{ ref('order_history') }} except select * from expected)
