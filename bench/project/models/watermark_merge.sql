-- 3. the common incremental pattern: merge what has a newer updated_at (misses deletes)
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select id, customer_id, status, amount, created_at, updated_at, note
from {{ source('bench', 'orders') }}
{% if is_incremental() %}
where updated_at > (select max(updated_at) from {{ this }})
{% endif %}
