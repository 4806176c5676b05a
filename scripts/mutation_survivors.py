"""`make mutate`'s list of surviving mutants, each with what it changed and why it survived.

Reads `mutmut results` on stdin, asks `mutmut show` for each survivor's diff and sorts it
into one of five reasons by where the change sits in the engine's source:
- wording: the change is in the text of an error or warning; the tests assert the object and
  the fix a message names, not every word of it;
- equivalent: only the letter case of SQL changed, outside any quoted SQL string; Spark's
  keywords, function names and identifiers are case-insensitive;
- fallback: the default of a `.get(key, default)` or an `x or default` changed, for a value
  Delta's history and catalog always give (no test feeds a row without it);
- sql: the text of generated SQL changed (a string wrapped in XX, the case of a quoted SQL
  string, or any change in a module or `*_sql` function that only builds SQL); the unit
  tests assert the SQL's structure, and only running it on Spark tells (the functional
  tests do; make mutate runs none);
- untested: no unit test pins this detail; the line names the function whose unit tests
  miss it (the functional tests run the engine on Spark, but make mutate does not run them).
Prints Markdown, one line per survivor, grouped by module.
"""

import ast
import re
import subprocess
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

MUTMUT = str(Path(sys.executable).with_name("mutmut"))
NAME = re.compile(r"^\s*(?P<name>(?P<module>[\w.]+?)\.x[_ǁ]\S+?__mutmut_\d+): survived$")
MESSAGE_CALLS = ("StreamError", "StreamStaleError", "warnings.append")
# Python-side string handling: a case change there is not equivalent.
PYTHON_CALLS = {"get", "startswith", "endswith", "split", "replace", "index", "find", "lower"}
# Modules that only build SQL (the netting, system-time and view change queries).
SQL_MODULES = {"changes", "system_time", "view_changes", "view_interval"}
# The default of a `.get(key, default)` or the `or default` of a value read from Delta.
FALLBACK = re.compile(r"(\.get\([^()]*,\s*\"?|\bor\s+\"?)$")
SQL_WORDS = re.compile(
    r"\b(select|from|where|over|partition|by|case|when|then|else|end|join|union|all|as|and|"
    r"or|not|in|is|null|true|false|count_if|row_number|sum|max|min|cast|struct|named_struct|"
    r"to_json|sha1|concat|coalesce|version|timestamp|values|insert|into|on|using)\b|\b_\w+"
)
REASONS = {
    "wording": "wording of a message",
    "equivalent": "equivalent: SQL letter case",
    "fallback": "changes a fallback for a value Delta's history and catalog always give",
    "sql": "changes the SQL `{function}` generates: only Spark can tell (make mutate runs none)",
    "untested": "untested: no unit test of `{function}` pins it",
}


def survivors(lines: list[str]) -> list[tuple[str, str]]:
    """(mutant, module) of each survivor in `mutmut results` output."""
    found = (NAME.match(line.rstrip()) for line in lines)
    return [(match["name"], match["module"]) for match in found if match]


def diff(mutant: str) -> tuple[str, str]:
    """The mutant's first removed and first added line."""
    shown = subprocess.run([MUTMUT, "show", mutant], capture_output=True, text=True).stdout
    removed = [line[1:] for line in shown.splitlines() if re.match(r"^-(?!--)", line)]
    added = [line[1:] for line in shown.splitlines() if re.match(r"^\+(?!\+\+)", line)]
    return (removed or [""])[0], (added or [""])[0]


def function_of(mutant: str) -> str:
    """`x_name__mutmut_3` -> name; `xǁClassǁname__mutmut_3` -> Class.name."""
    tail = re.sub(r"__mutmut_\d+$", "", mutant.rsplit(".", 1)[1])
    return ".".join(tail.split("ǁ")[1:]) if tail.startswith("xǁ") else tail[2:]


@cache
def parsed(module: str) -> tuple[list[str], ast.Module]:
    source = Path(module.replace(".", "/") + ".py").read_text()
    return source.splitlines(), ast.parse(source)


def enclosing(module: str, function: str, removed: str) -> list[ast.AST]:
    """The calls and comparisons around the removed line inside `function`."""
    lines, tree = parsed(module)
    name = function.rsplit(".", 1)[-1]
    defined = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    for node in (node for node in defined if node.name == name):
        span = range(node.lineno, (node.end_lineno or node.lineno) + 1)
        numbers = [n for n in span if lines[n - 1].strip() == removed.strip()]
        if numbers:
            return [
                inner
                for inner in ast.walk(node)
                if isinstance(inner, ast.Call | ast.Compare | ast.Dict)
                and inner.lineno <= numbers[0] <= (inner.end_lineno or inner.lineno)
            ]
    return []


def reason(module: str, function: str, removed: str, added: str) -> str:
    around = enclosing(module, function, removed)
    calls = [ast.unparse(node.func) for node in around if isinstance(node, ast.Call)]
    in_string = added.replace("XX", "") == removed or _case_only(removed, added)
    if in_string and any(call.endswith(MESSAGE_CALLS) for call in calls):
        return "wording"
    python_side = any(isinstance(node, ast.Compare | ast.Dict) for node in around) or any(
        call.rsplit(".", 1)[-1] in PYTHON_CALLS for call in calls
    )
    if _case_only(removed, added) and not python_side and SQL_WORDS.search(removed.lower()):
        quoted = re.compile(r"'[^']*'")
        if quoted.findall(removed) == quoted.findall(added) or _python_quotes_only(removed, added):
            return "equivalent"
    prefix = _common_prefix(removed, added)
    if FALLBACK.search(prefix):
        return "fallback"
    if module.rsplit(".", 1)[-1] in SQL_MODULES or function.endswith("_sql"):
        return "sql"
    if in_string and not python_side and SQL_WORDS.search(removed):
        return "sql"
    return "untested"


def _common_prefix(removed: str, added: str) -> str:
    same = next((i for i, (a, b) in enumerate(zip(removed, added, strict=False)) if a != b), None)
    return removed[: min(len(removed), len(added)) if same is None else same]


def _case_only(removed: str, added: str) -> bool:
    return removed != added and removed.lower() == added.lower()


def _python_quotes_only(removed: str, added: str) -> bool:
    """Whether the changed SQL sits outside SQL quotes: each Python literal that changed holds
    no SQL string whose text changed."""
    literals = re.compile(r"\"[^\"]*\"")
    pairs = zip(literals.findall(removed), literals.findall(added), strict=False)
    changed = [(old, new) for old, new in pairs if old != new]
    quoted = re.compile(r"'[^']*'")
    return bool(changed) and all(quoted.findall(o) == quoted.findall(n) for o, n in changed)


def main() -> None:
    by_module: dict[str, list[str]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for mutant, module in survivors(sys.stdin.readlines()):
        removed, added = diff(mutant)
        function = function_of(mutant)
        why = reason(module, function, removed, added)
        counts[why] += 1
        short = mutant.rsplit(".", 1)[1]
        by_module[module.rsplit(".", 1)[-1]].append(
            f"- `{short}`: `{removed.strip()[:90]}` → `{added.strip()[:90]}`; "
            + REASONS[why].format(function=function)
        )
    print("# Surviving mutants\n")
    print(", ".join(f"{counts[why]} {why}" for why in REASONS) + "\n")
    for module in sorted(by_module):
        print(f"## {module}\n")
        print("\n".join(by_module[module]) + "\n")


if __name__ == "__main__":
    main()
