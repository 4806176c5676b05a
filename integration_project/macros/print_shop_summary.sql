{#- Prints every relation in the shop's schemas with its kind, format and row count, customer
    1's versions in the history, the files in the order events' landing folder, then the streams with their offsets (show_streams).
    Each schema is listed once and every count is one query: dbt's get_relation would list the
    schema again for each relation in a run-operation, which has no relation cache. -#}
{% macro print_shop_summary() %}
  {% set relations = [] %}
  {% for schema in ['shop_raw', target.schema] %}
    {% set listed = run_query("show table extended in " ~ schema ~ " like '*'") %}
    {% for row in listed.rows | sort(attribute='tableName') %}
      {% set kind = 'view' if 'Type: VIEW' in row['information'] else 'table' %}
      {% set kind = kind ~ (' (delta)' if 'Provider: delta' in row['information'] else '') %}
      {% do relations.append((schema ~ '.' ~ row['tableName'], kind)) %}
    {% endfor %}
  {% endfor %}
  {% set counts = [] %}
  {% for name, kind in relations %}
    {% do counts.append("select " ~ loop.index0 ~ " as i, count(*) as n from " ~ name) %}
  {% endfor %}
  {% set rows = {} %}
  {% for row in run_query(counts | join(' union all ')).rows %}
    {% do rows.update({row['i']: row['n']}) %}
  {% endfor %}
  {% for name, kind in relations %}
    {{ print('%-36s %-15s %8d rows' | format(name, kind, rows[loop.index0])) }}
  {% endfor %}
  {{ print("customer 1's versions in customers_history:") }}
  {% set versions = run_query("select country, valid_from, valid_to from " ~ target.schema ~ ".customers_history where customer_id = 1 order by valid_from") %}
  {% for row in versions.rows %}
    {{ print('  country=%s valid_from=%s valid_to=%s' | format(row[0], row[1], row[2] if row[2] is not none else 'null (current)')) }}
  {% endfor %}
  {% set files = run_query("select count(*) from (select distinct _metadata.file_path from shop_raw.order_events)").columns[0].values()[0] %}
  {{ print('order events: %d files landed in shop_raw.order_events\' folder' | format(files)) }}
  {{ show_streams() }}
{% endmacro %}
