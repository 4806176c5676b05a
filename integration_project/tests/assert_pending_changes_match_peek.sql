{#- changes() from the mirror stream's offset holds exactly what a stream() peek at that
    stream holds (customers_pending_changes): the same rows, netted the same way. -#}
{%- set pending = changes(source('shop', 'customers'), at={'stream': 'customers_mirror__customers'},
                          unique_key='customer_id') -%}
with peek as (
  select customer_id, name, metadata_action, metadata_isupdate
  from {{ ref('customers_pending_changes') }}
), read_back as (
  select customer_id, name, metadata_action, metadata_isupdate from {{ pending }}
)
(select * from peek except all select * from read_back)
union all
(select * from read_back except all select * from peek)
