"""Views as stream sources: what a view may contain, its definition expanded to Delta tables,
the change algebra that derives its changes from theirs, and the join-side pruning of its
terms.

May import: delta, records, sql.
"""
