"""Change feeds applied to a table of current state or of every version (incremental_strategy
'apply_cdc'): the config, and the SQL of a build: the events checked, the deletes kept as
tombstones, and one MERGE of each touched key's newest state (scd1.py) or of its versions
recomputed (scd2.py).

May import: sql.
"""
