-- the customers' Debezium feed applied equals the customers it describes: the current-state
-- table, and the current versions of the history
with source as (select customer_id, name, email, country from {{ source('shop', 'customers') }}),
current_state as (select customer_id, name, email, country from {{ ref('customers_cdc_current') }}),
current_versions as (
  select customer_id, name, email, country from {{ ref('customers_cdc_history') }}
  where __end_at is null
)
(select 'current', * from source except select 'current', * from current_state)
union all
(select 'current', * from current_state except select 'current', * from source)
union all
(select 'history', * from source except select 'history', * from current_versions)
union all
(select 'history', * from current_versions except select 'history', * from source)
