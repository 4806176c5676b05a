{#- Every row of every landed file is in the log exactly once. -#}
(select order_id, event, occurred_at from {{ source('shop', 'order_events') }}
 except all select order_id, event, occurred_at from {{ ref('order_events_log') }})
union all
(select order_id, event, occurred_at from {{ ref('order_events_log') }}
 except all select order_id, event, occurred_at from {{ source('shop', 'order_events') }})
