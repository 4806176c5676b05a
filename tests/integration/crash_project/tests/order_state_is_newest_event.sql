-- each key's newest event (by seq), unless a delete: what apply_cdc must hold
with newest as (
  select id, max_by(struct(amount, op), seq) as e from {{ source('raw', 'order_events') }} group by id
),
expected as (select id, e.amount as amount from newest where e.op != 'D')
(select id, amount from expected except select id, amount from {{ ref('order_state') }})
union all
(select id, amount from {{ ref('order_state') }} except select id, amount from expected)
