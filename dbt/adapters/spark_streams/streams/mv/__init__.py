"""Materialized views: which queries refresh from their sources' changes (group keys and
aggregates over an input a view stream follows), and the SQL of their first build and of a
refresh that brings only the changed groups up to date.

May import: views, sql.
"""
