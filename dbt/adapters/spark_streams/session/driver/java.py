"""A Java class by its whole name, for the code that reads Delta on the driver through py4j.

`jvm.org.apache.spark.sql.delta.DeltaLog` asks the JVM about each dotted part in turn (`org`,
`org.apache`, ...), and each part that names a package is a class lookup that fails only
after searching every jar on the class path under each of py4j's imports: about 2.5 ms of
the JVM's CPU for a name of six parts, on a class path of Spark's and Delta's 300 jars. A
statement that reads a table's history named a dozen classes that way. A class made from its
whole name asks nothing until one of its members is used.
"""

from typing import Any

from py4j.java_gateway import JavaClass

TABLE_IDENTIFIER = "org.apache.spark.sql.catalyst.TableIdentifier"


def java_class(jvm: Any, name: str) -> Any:
    """The class `name` (`org.apache.spark.sql.delta.DeltaLog`, `scala.None$`) of `jvm`, a
    session's py4j view, without a round trip to the JVM."""
    return JavaClass(name, jvm._gateway_client)
