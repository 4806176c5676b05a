{#- What dbt users keep every version with today: a snapshot of the current-state table
    (the floor's), compared column by column (bench/cdc.py). -#}
{% snapshot cdc_snapshot %}
{{ config(target_schema='bench', unique_key='id', strategy='check',
          check_cols=['status', 'amount'], file_format='delta') }}
select id, status, amount, seq from bench.cdc_floor
{% endsnapshot %}
