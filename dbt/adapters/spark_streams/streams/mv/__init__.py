"""Materialized views: which queries refresh from their sources' changes (group keys and
aggregates over an input a view stream follows, or over outer joins of tables), their build
plan, and the SQL of their first build and of a refresh that brings only the changed groups
up to date.

May import: views, sql.
"""
