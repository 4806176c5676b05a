{#- Every change since the table was created (version 0, empty): its current rows, inserted. -#}
{{ config(materialized='table') }}
select id, name, tier, metadata_action
from {{ changes(source('raw', 'customers'), at={'version': 0}) }}
