"""What the run-operations report and do (show_streams, describe_stream, drop_stream) and what
the stream_fresh test checks: each stream's staleness now, asked of its kind, and its listing.

May import: kinds, views, offsets, sql.
"""
