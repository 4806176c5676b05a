#!/usr/bin/env bash
# Injects each fault tests/functional/streams/test_blind_spots.py guards against, one at a
# time, runs the test that must catch it, and restores the code. Every line must say "failed".
set -u
cd "$(dirname "$0")/.."
TMPDIR_FAULTS=$(mktemp -d)
T=tests/functional/streams/test_blind_spots.py
run() { timeout 900 .venv/bin/pytest -q -p no:logging $T -k "$1" 2>&1 | grep -E "passed|failed" | tail -1; }
# fault 1: the source version re-read at every reference
cp dbt/adapters/spark_streams/streams/resolve.py "$TMPDIR_FAULTS"/f1.bak
python3 - <<'PY'
p='dbt/adapters/spark_streams/streams/resolve.py'
s=open(p).read()
s=s.replace("""    if source.name not in build.pins:
        build.pins[source.name] = kind.latest(run, source)
    return build.pins[source.name]""","""    build.pins[source.name] = kind.latest(run, source)
    return build.pins[source.name]""")
s=s.replace("build.pins.setdefault(source.name, history.latest)","build.pins[source.name] = history.latest")
s=s.replace("history = kind.history(run, source, existing, build.pins.get(source.name))","history = kind.history(run, source, existing, None)")
open(p,'w').write(s)
PY
echo "fault 1 (repeatable read): $(run commit_during)"
cp "$TMPDIR_FAULTS"/f1.bak dbt/adapters/spark_streams/streams/resolve.py
# fault 2: the whole-history read dropped
cp dbt/adapters/spark_streams/streams/staleness.py "$TMPDIR_FAULTS"/f2.bak
python3 - <<'PY'
p='dbt/adapters/spark_streams/streams/staleness.py'
s=open(p).read()
s=s.replace('''        rows = run(f"describe history {source}")''','''        pass''',1)
open(p,'w').write(s)
PY
echo "fault 2 (history page): $(run history_page)"
cp "$TMPDIR_FAULTS"/f2.bak dbt/adapters/spark_streams/streams/staleness.py
# fault 3: only the deleted-files retention raised
cp dbt/adapters/spark_streams/streams/retention.py "$TMPDIR_FAULTS"/f3.bak
python3 - <<'PY'
p='dbt/adapters/spark_streams/streams/retention.py'
s=open(p).read()
s=s.replace("for key, have in ((DELETED_FILES, current.deleted_files), (LOG, current.log))","for key, have in ((DELETED_FILES, current.deleted_files),)")
open(p,'w').write(s)
PY
echo "fault 3 (log retention): $(run log_retention)"
cp "$TMPDIR_FAULTS"/f3.bak dbt/adapters/spark_streams/streams/retention.py
git status --short dbt/
