"""What stream() and changes() read, one module per kind of source (Delta table, view, file
table), each implementing StreamKind; the kind is chosen in one place (choose.py).

May import: builds, travel, delta, views, files, offsets, records, sql.
"""
