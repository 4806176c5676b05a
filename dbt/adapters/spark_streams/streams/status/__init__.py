"""What the run-operations report and do (show_streams, describe_stream, explain_stream,
drop_stream) and what the stream_fresh test checks: each stream's staleness now, asked of its
kind, its listing, and the path a model's next build would take.

May import: kinds, builds, views, offsets, sql.
"""
