"""`make mutate`'s summary: mutmut's verdict per module of the engine, and the score.

Reads `mutmut results --all true` on stdin (one `module.x_function__mutmut_N: status` line
per mutant) and prints a Markdown table: killed, survived, no tests (no unit test runs the
function), timeout, and the share killed (timeouts count as killed, as mutmut counts them).
"""

import re
import sys
from collections import Counter, defaultdict

LINE = re.compile(r"^\s*(?P<module>[\w.]+?)\.x[_ǁ].*: (?P<status>[\w ]+)$")
COLUMNS = ("killed", "survived", "no tests", "timeout")


def main() -> None:
    counts: dict[str, Counter] = defaultdict(Counter)
    for line in sys.stdin:
        found = LINE.match(line.rstrip())
        if found:
            module = found["module"].split(".streams.", 1)[-1]
            counts[module][found["status"].strip()] += 1
    total: Counter = Counter()
    print("| module | " + " | ".join(COLUMNS) + " | killed % |")
    print("| --- |" + " ---: |" * (len(COLUMNS) + 1))
    for module in sorted(counts):
        print(_row(module, counts[module]))
        total.update(counts[module])
    print(_row("**all**", total))


def _row(name: str, count: Counter) -> str:
    mutants = sum(count.values())
    killed = count["killed"] + count["timeout"]
    share = f"{100 * killed / mutants:.0f}" if mutants else "-"
    return f"| {name} | " + " | ".join(str(count[c]) for c in COLUMNS) + f" | {share} |"


if __name__ == "__main__":
    main()
