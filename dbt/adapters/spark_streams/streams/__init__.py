"""The stream engine: plain Python that decides, and SQL text that Spark runs.

Its packages are layers; each package's docstring says what it may import, and imports only
go down (every package may import `errors`). Nothing here touches the JVM from Python, so every
statement works over Spark Connect too.
"""
