"""The JVM start aids: the Delta jars resolved once per machine (jar_cache.py) and a
class-data-sharing archive of the classes a session loads (cds.py), behind one interface the
embedded session calls before and after a start (fast_start.py). They import neither dbt nor
pyspark: they decide how a JVM starts, before there is one.
"""
