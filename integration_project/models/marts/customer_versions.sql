{#- Every version of every customer the source's readable history holds, with the commit
    times that opened and closed it: system-time travel over the Change Data Feed. -#}
{{ config(materialized='table') }}
select customer_id, name, email, country, _sys_start, _sys_end
from {{ for_system_time(source('shop', 'customers'),
                        between=(retention_start(source('shop', 'customers')),
                                 '2999-12-31 00:00:00')) }}
