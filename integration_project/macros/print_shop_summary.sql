{#- Prints every relation in the shop's schemas with its kind, format and row count, customer
    1's versions in the history, the files in the order events' landing folder, then the streams with their offsets (show_streams). -#}
{% macro print_shop_summary() %}
  {% for schema in ['shop_raw', target.schema] %}
    {% for name in run_query('show tables in ' ~ schema).columns['tableName'].values() | sort %}
      {% set relation = adapter.get_relation(database=none, schema=schema, identifier=name) %}
      {% set rows = run_query('select count(*) from ' ~ relation).columns[0].values()[0] %}
      {% set kind = relation.type ~ (' (delta)' if relation.is_delta else '') %}
      {{ print('%-36s %-15s %8d rows' | format(relation ~ '', kind, rows)) }}
    {% endfor %}
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
