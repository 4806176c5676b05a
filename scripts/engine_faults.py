"""Inject faults into the stream engine one at a time, run the functional test that must
catch each, and restore the code: every line must say "failed". A fault no test catches is a
blind spot of the tests, not of the engine.

    .venv/bin/python scripts/engine_faults.py              # every fault (about 3 minutes)
    .venv/bin/python scripts/engine_faults.py key ranges   # the faults whose name says so

Run it on a quiet working tree: it edits the engine's files in place while its test runs, so
a dbt process started elsewhere from this checkout meanwhile would run the fault too.
"""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENGINE = "dbt/adapters/spark_streams/streams/"
MACROS = "dbt/include/spark_streams/macros/materializations/stream_incremental/"
STREAMS = "tests/functional/streams/"

# (what the fault is, the file, [(text, replacement)], the test file, its -k or "")
FAULTS = [
    (
        "the source version re-read at every reference",
        ENGINE + "kinds/table_stream.py",
        [
            ("    if source.name not in build.pins:\n        build.pins[source.name] = table",
             "    if True:\n        build.pins[source.name] = table"),
            ("build.pins.setdefault(source.name, history.latest)",
             "build.pins[source.name] = history.latest"),
            ("table.history(run, source, existing, build.pins.get(source.name))",
             "table.history(run, source, existing, None)"),
        ],
        STREAMS + "test_blind_spots.py", "commit_during",
    ),
    (
        "the pending range read from the newest commit alone",
        ENGINE + "delta/staleness.py",
        [("        wider = int(rows[0][\"version\"]) - offset + 1\n",
          "        wider = page\n")],
        STREAMS + "test_blind_spots.py", "history_page",
    ),
    (
        "only the deleted-files retention raised",
        ENGINE + "delta/retention.py",
        [("(DELETED_FILES, current.deleted_files), (LOG, current.log))",
          "(DELETED_FILES, current.deleted_files),)")],
        STREAMS + "test_blind_spots.py", "log_retention",
    ),
    (
        "key ranges: each range misses its lowest key",
        ENGINE + "records/key_ranges.py",
        [('f"{column} between {int(low)} and {int(high)}"',
          'f"{column} between {int(low) + 1} and {int(high)}"')],
        STREAMS + "test_fuzz.py", "",
    ),
    (
        "key ranges: the gaps between keys computed in the key's own type",
        ENGINE + "records/key_ranges.py",
        [("cast(k as decimal(20, 0)) - lag(k)", "k - lag(k)")],
        STREAMS + "test_key_ranges_sql.py", "",
    ),
    (
        "a key of several columns matched on its first column only",
        MACROS + "helpers.sql",
        [("{%- for key in unique_key -%}\n    t.", "{%- for key in unique_key[:1] -%}\n    t.")],
        STREAMS + "test_composite_key.py", "",
    ),
]  # fmt: skip


def with_fault(path: Path, replacements: list[tuple[str, str]], test: str, select: str) -> str:
    """The test's pytest summary with the fault in place; the file is restored after."""
    original = path.read_text()
    faulty = original
    for text, replacement in replacements:
        if text not in faulty:
            sys.exit(f"{path.name} no longer holds {text!r}: update this fault")
        faulty = faulty.replace(text, replacement)
    path.write_text(faulty)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:logging", test,
             *(["-k", select] if select else [])],
            cwd=REPO, capture_output=True, text=True, check=False, timeout=900,
        )  # fmt: skip
    finally:
        path.write_text(original)
    summary = [line for line in done.stdout.splitlines() if " passed" in line or " failed" in line]
    return summary[-1] if summary else done.stdout[-500:]


if __name__ == "__main__":
    wanted = " ".join(sys.argv[1:])
    for fault, file, replacements, test, select in FAULTS:
        if wanted in fault:
            print(f"{fault}: {with_fault(REPO / file, replacements, test, select)}", flush=True)
