"""Where the tables and the catalog live when they are not on this machine: an object store
behind S3A (object_store.py) and a PostgreSQL or MySQL metastore (metastore_schema.py), each
asked once when the session starts (probe.py)."""
