"""What show_streams, describe_stream and the stream_fresh test report: each stream's
staleness now, asked of its kind, and how it is printed.

May import: kinds, files, offsets, sql.
"""
