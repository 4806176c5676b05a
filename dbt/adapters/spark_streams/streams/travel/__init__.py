"""Reading a source's history without a stream, one module per macro: changes(),
for_system_time() with retention_start(), and current_valid_time().

May import: delta, views, offsets, records, sql.
"""
