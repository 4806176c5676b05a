"""What every stream returns: the change records' columns, row ids and netting, as SQL
over a change feed, the canonical forms that make any column type comparable, and the key
ranges of a change set that let Delta skip files.

May import: sql.
"""
