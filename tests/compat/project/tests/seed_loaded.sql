select * from (select count(*) as n from {{ ref('tiers') }}) where n <> 3
