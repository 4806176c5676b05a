"""Measuring the test suite: what each module costs and how much work it asks of Spark and dbt.

`make measure` loads plugin.py into pytest; site/sitecustomize.py counts the statements of the
dbt processes the integration tests start.
"""
