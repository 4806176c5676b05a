"""Delta tables as stream sources: their metadata, retention, staleness, identity, schema
changes (and the type widening a target follows) and history (what was appended, how many
change rows), and the states points name.

May import: records, offsets, sql.
"""
