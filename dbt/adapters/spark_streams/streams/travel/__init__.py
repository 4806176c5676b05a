"""Reading a source's history without a stream, one module per macro: changes(),
for_system_time() with retention_start(), and current_valid_time(); and whether Delta can
still read a changes() interval (readable).

May import: delta, views, offsets, records, sql.
"""
