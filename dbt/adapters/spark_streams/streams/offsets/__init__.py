"""Where offsets live: the registry, the commit protocol that moves them with the target's
data, the state a cloned or restored target is at, and what a write counted.

May import: sql.
"""
