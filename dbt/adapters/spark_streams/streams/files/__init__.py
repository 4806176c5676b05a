"""File-based tables (Parquet, CSV, JSON, ...) as insert-only stream sources: their folder
and listing, and the file sets that are their streams' offsets.

May import: offsets, sql.
"""
