{#- A view joining the two Delta sources: paired_mirror streams its changes. -#}
{{ config(materialized='view') }}
select o.id, o.amount, c.name, c.tier
from {{ source('raw', 'orders') }} o join {{ source('raw', 'customers') }} c on o.id = c.id
