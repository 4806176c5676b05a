"""Inject each fault tests/functional/streams/test_blind_spots.py guards against, one at a
time, run the test that must catch it, and restore the code. Every line must say "failed".

    .venv/bin/python scripts/blind_spot_faults.py
"""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENGINE = REPO / "dbt" / "adapters" / "spark_streams" / "streams"
TEST = "tests/functional/streams/test_blind_spots.py"

# (what the fault is, the file, [(text, replacement)], the test that must fail)
FAULTS = [
    (
        "the source version re-read at every reference",
        "resolve.py",
        [
            ("    if source.name not in build.pins:\n        build.pins[source.name] = kind",
             "    if True:\n        build.pins[source.name] = kind"),
            ("build.pins.setdefault(source.name, history.latest)",
             "build.pins[source.name] = history.latest"),
            ("kind.history(run, source, existing, build.pins.get(source.name))",
             "kind.history(run, source, existing, None)"),
        ],
        "commit_during",
    ),
    (
        "the whole-history read dropped",
        "staleness.py",
        [('        rows = run(f"describe history {source}")', "        pass")],
        "history_page",
    ),
    (
        "only the deleted-files retention raised",
        "retention.py",
        [("(DELETED_FILES, current.deleted_files), (LOG, current.log))",
          "(DELETED_FILES, current.deleted_files),)")],
        "log_retention",
    ),
]  # fmt: skip


def with_fault(path: Path, replacements: list[tuple[str, str]], test: str) -> str:
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
            [sys.executable, "-m", "pytest", "-q", "-p", "no:logging", TEST, "-k", test],
            cwd=REPO, capture_output=True, text=True, check=False, timeout=900,
        )  # fmt: skip
    finally:
        path.write_text(original)
    summary = [line for line in done.stdout.splitlines() if " passed" in line or " failed" in line]
    return summary[-1] if summary else done.stdout[-500:]


if __name__ == "__main__":
    for fault, module, replacements, test in FAULTS:
        print(f"{fault}: {with_fault(ENGINE / module, replacements, test)}", flush=True)
