#!/usr/bin/env bash
# A Spark cluster on this machine (standalone master, two workers, a Spark Connect server with
# Delta, a Derby metastore server), for `method: connect` profiles and the cluster test.
#   scripts/cluster.sh start <dir>   prints the profile's host (sc://localhost:<port>)
#   scripts/cluster.sh stop <dir>
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec "$root/.venv/bin/python" "$root/scripts/cluster.py" "$@"
