-- each key's newest event (by seq), unless a delete: the current state, and the open version
-- of each key in the history of tiers
with newest as (
  select id, max_by(struct(tier, login, op), seq) as e
  from (select distinct * from {{ source('raw', 'customer_events') }}) group by id
),
expected as (select id, e.tier as tier, e.login as login from newest where e.op != 'D'),
state as (select id, tier, login from {{ ref('customers_state') }}),
open_versions as (select id, tier, login from {{ ref('customers_tiers') }} where __end_at is null)
(select * from expected except all select * from state)
union all (select * from state except all select * from expected)
union all (select * from expected except all select * from open_versions)
union all (select * from open_versions except all select * from expected)
