"""The measure plugin's figures per test, summed per module into a Markdown table, each module
with what it proves: the first sentence of its docstring."""

import ast
import re
from collections.abc import Mapping
from pathlib import Path

FIRST_SENTENCE = re.compile(r"^(.*?[.])(?:\s|$)", re.DOTALL)


def proves(module: str, root: Path = Path()) -> str:
    """The first sentence of a test module's docstring, on one line ('' without one)."""
    try:
        docstring = ast.get_docstring(ast.parse((root / module).read_text())) or ""
    except (OSError, SyntaxError):
        return ""
    found = FIRST_SENTENCE.match(docstring.strip())
    sentence = found[1] if found else docstring
    return " ".join(sentence.split()).rstrip(".") + "."


def module_rows(tests: Mapping[str, Mapping[str, float]]) -> list[dict[str, float | str]]:
    """One row per module (the node id's file), longest first, with its tests' count."""
    modules: dict[str, dict[str, float]] = {}
    for nodeid, figures in tests.items():
        if not nodeid:
            continue  # work outside any test (a session fixture's start counts in its test)
        row = modules.setdefault(nodeid.split("::")[0], {"tests": 0})
        row["tests"] += 1
        for name, amount in figures.items():
            row[name] = row.get(name, 0) + amount
    rows: list[dict[str, float | str]] = [{"module": name, **row} for name, row in modules.items()]
    return sorted(rows, key=lambda row: -float(row.get("wall", 0)))


def render(rows: list[dict[str, float | str]], root: Path = Path()) -> str:
    """The table, with a total row."""
    columns = ("tests", "wall", "cpu", "statements", "dbt")
    lines = [
        "| module | what it proves | tests | seconds | CPU-seconds | Spark statements | dbt "
        "invocations |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    totals = dict.fromkeys(columns, 0.0)
    for row in rows:
        cells = []
        for column in columns:
            value = float(row.get(column, 0))
            totals[column] += value
            cells.append(f"{value:,.0f}")
        name = str(row["module"])
        lines.append(f"| `{name}` | {proves(name, root)} | " + " | ".join(cells) + " |")
    lines.append("| all | | " + " | ".join(f"{totals[c]:,.0f}" for c in columns) + " |")
    return "\n".join(lines) + "\n"


def render_kinds(
    counts: Mapping[tuple[str, str], int], seconds: Mapping[str, float], most: int = 15
) -> str:
    """The statements of every test by kind, the most frequent first, with the seconds the
    adapter's cursor waited for them (a test's own `spark.sql` calls are counted, not timed)."""
    kinds: dict[str, int] = {}
    for (_, sort), n in counts.items():
        kinds[sort] = kinds.get(sort, 0) + n
    lines = ["| statement | count | cursor seconds |", "| --- | ---: | ---: |"]
    ranked = sorted(kinds.items(), key=lambda item: -item[1])
    lines += [f"| `{sort}` | {n:,} | {seconds.get(sort, 0):,.1f} |" for sort, n in ranked[:most]]
    rest = sum(n for _, n in ranked[most:])
    if rest:
        took = sum(seconds.get(sort, 0) for sort, _ in ranked[most:])
        lines.append(f"| other | {rest:,} | {took:,.1f} |")
    return "\n".join(lines) + "\n"
