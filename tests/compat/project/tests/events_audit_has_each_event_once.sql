select id, count(*) as copies from {{ ref('events_audit') }} group by id having count(*) <> 1
union all
select id, 0 from {{ source('raw', 'events') }}
where id not in (select id from {{ ref('events_audit') }})
