"""Statements the embedded session's driver answers without a Spark job, with exactly the rows
Spark's job would give: DESCRIBE HISTORY of a Delta table (history.py), DESCRIBE DETAIL of one
(detail.py, its counts from the version's checksum) and the listing of a file table's folder
(file_listing.py). The cursor asks them first; anything they do not take, a Spark Connect
session and any error go to Spark.
"""
