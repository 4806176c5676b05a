"""Where Spark runs: the embedded session the adapter starts itself (its confs, and the JVM
start aids in jvm/), the sessions on a server it does not start (servers/: Spark Connect, a
Spark Thrift Server), the dbt-spark cursor bound to a session, the confs set around one
statement, the statements its driver answers without a Spark job (driver/), Spark's errors as
a dbt user should read them, and values bound into SQL. The stream engine (streams/) never
imports this package.
"""
