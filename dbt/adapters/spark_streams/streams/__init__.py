"""The stream engine: plain Python that decides, and SQL text that Spark runs.

Nothing here touches the JVM from Python, so every statement works over Spark Connect too.
"""
