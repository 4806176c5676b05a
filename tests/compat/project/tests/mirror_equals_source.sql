(select id, name, tier from {{ source('raw', 'customers') }}
 except all select id, name, tier from {{ ref('customers_mirror') }})
union all
(select id, name, tier from {{ ref('customers_mirror') }}
 except all select id, name, tier from {{ source('raw', 'customers') }})
