(select id, name, tier from {{ source('raw', 'customers') }}
 except all select id, name, tier from {{ ref('customers_changes') }})
union all
(select id, name, tier from {{ ref('customers_changes') }}
 where metadata_action <> 'INSERT' or id not in (select id from {{ source('raw', 'customers') }}))
