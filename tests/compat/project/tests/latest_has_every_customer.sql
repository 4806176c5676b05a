select id, name, tier from {{ source('raw', 'customers') }}
except all select id, name, tier from {{ ref('customers_latest') }}
