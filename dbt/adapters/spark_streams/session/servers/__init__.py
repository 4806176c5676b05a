"""Sessions on a server the adapter does not start: Spark Connect's (connect.py), the profile's
confs on a Spark Thrift Server's session (thrift_session.py), and the servers a run found gone,
so that every later statement of the run says so at once (lost_servers.py).
"""
