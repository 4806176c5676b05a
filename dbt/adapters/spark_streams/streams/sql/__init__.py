"""How the engine talks to Spark: SQL text in, rows out; quoting, and what DESCRIBE says.

May import: nothing else of the engine.
"""
