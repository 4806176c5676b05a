{#- Prints every relation in the shop's schemas with its kind, format and row count, then the
    streams with their offsets (the adapter's show_streams). -#}
{% macro print_shop_summary() %}
  {% for schema in ['shop_raw', target.schema] %}
    {% for name in run_query('show tables in ' ~ schema).columns['tableName'].values() | sort %}
      {% set relation = adapter.get_relation(database=none, schema=schema, identifier=name) %}
      {% set rows = run_query('select count(*) from ' ~ relation).columns[0].values()[0] %}
      {% set kind = relation.type ~ (' (delta)' if relation.is_delta else '') %}
      {{ print('%-36s %-15s %8d rows' | format(relation ~ '', kind, rows)) }}
    {% endfor %}
  {% endfor %}
  {{ show_streams() }}
{% endmacro %}
