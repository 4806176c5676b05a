"""Where Spark runs: the embedded session the adapter starts itself (its confs, and the JVM
start aids in jvm/), Spark Connect, the profile's confs on a Spark Thrift Server's session,
the dbt-spark cursor bound to a session, the confs set around one statement, the statements
its driver answers without a Spark job (driver/), Spark's errors as a dbt user should read
them, and values bound into SQL. The stream engine (streams/) never imports this package.
"""
