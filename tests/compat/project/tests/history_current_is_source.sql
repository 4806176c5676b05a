(select id, name, tier from {{ source('raw', 'customers') }}
 except all select id, name, tier from {{ ref('customers_history') }} where valid_to is null)
union all
(select id, name, tier from {{ ref('customers_history') }} where valid_to is null
 except all select id, name, tier from {{ source('raw', 'customers') }})
