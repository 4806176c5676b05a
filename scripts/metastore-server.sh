#!/usr/bin/env bash
# A Derby network server for a Hive metastore that several dbt processes share.
#   scripts/metastore-server.sh start <data dir> [port]   (fetches the jars on first use)
#   scripts/metastore-server.sh stop  <data dir> [port]
# Profiles then use: metastore_url: "jdbc:derby://localhost:<port>/metastore_db;create=true"
#                    metastore_driver_jar: <repo>/.jars/derby-server/derbyclient-10.16.1.1.jar
set -euo pipefail

action=${1:?usage: metastore-server.sh start|stop <data dir> [port]}
home=$(mkdir -p "${2:?data dir}" && cd "$2" && pwd)
port=${3:-1527}
root=$(cd "$(dirname "$0")/.." && pwd)
jars="$root/.jars/derby-server"
# The JIT's quick tier, as every JVM of the tests runs (the full JIT's compiles cost more CPU
# than they save on two cores).
java=(java -XX:TieredStopAtLevel=1)

if [ ! -f "$jars/derbyclient-10.16.1.1.jar" ]; then
  mvn --quiet -f "$root/scripts/derby-server.pom.xml" dependency:copy-dependencies \
      -DoutputDirectory="$jars"
fi

control() {
  "${java[@]}" -Dderby.system.home="$home" -cp "$jars/*" \
       org.apache.derby.drda.NetworkServerControl "$@" -h localhost -p "$port"
}

case "$action" in
  start)
    nohup "${java[@]}" -Dderby.system.home="$home" -Dderby.drda.startNetworkServer=true \
         -cp "$jars/*" org.apache.derby.drda.NetworkServerControl start -h localhost -p "$port" \
         > "$home/derby-server.log" 2>&1 &
    echo $! > "$home/derby-server.pid"
    for _ in $(seq 60); do
      if control ping > /dev/null 2>&1; then
        echo "Derby network server on localhost:$port, data in $home"
        exit 0
      fi
      sleep 1
    done
    echo "Derby network server did not start; see $home/derby-server.log" >&2
    exit 1
    ;;
  stop)
    control shutdown > /dev/null 2>&1 || true
    rm -f "$home/derby-server.pid"
    ;;
  *)
    echo "usage: metastore-server.sh start|stop <data dir> [port]" >&2
    exit 2
    ;;
esac
