(select id, amount, name, tier from {{ ref('paired_mirror') }}
 except all select id, amount, name, tier from {{ ref('paired') }})
union all
(select id, amount, name, tier from {{ ref('paired') }}
 except all select id, amount, name, tier from {{ ref('paired_mirror') }})
