"""Views as stream sources: what a view may contain, its definition expanded to Delta tables,
and the change algebra that derives its changes from theirs.

May import: delta, records, sql.
"""
