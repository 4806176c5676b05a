"""What every stream returns: the change records' columns, row ids and netting, as SQL
over a change feed, and the canonical forms that make any column type comparable.

May import: sql.
"""
