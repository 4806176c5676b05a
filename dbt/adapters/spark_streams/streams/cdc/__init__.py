"""Change feeds applied to a table of current state (incremental_strategy 'apply_cdc'): the
config, and the SQL of a build: the events checked, the deletes kept as tombstones, and one
MERGE of each touched key's newest state.

May import: sql.
"""
