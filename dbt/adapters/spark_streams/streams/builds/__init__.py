"""One model's build: its typed config, its life cycle from the first stream() call to the
commit, per-node state, and the crash tests' hook.

May import: cdc, delta, offsets, records, sql.
"""
