"""The adapter's methods the macros call, one mixin per concern: streams and their builds,
the stream run-operations, materialized views, the target schema, dbt unit tests; and the
response a build gives dbt."""
