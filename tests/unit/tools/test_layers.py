"""The house keeps its shape: the engine's packages import only down their layers (each
package's docstring says what it may import), the engine talks to Spark only through SQL text,
the JVM start aids import neither dbt nor pyspark, and no module, folder or function outgrows
what a reader takes in at once."""

import ast
import re
from pathlib import Path

import pytest

import dbt.adapters.spark_streams as package

ADAPTER = Path(package.__file__).parent
ENGINE = ADAPTER / "streams"
ENGINE_MODULE = "dbt.adapters.spark_streams.streams."
MOST_LINES, MOST_MODULES, MOST_FUNCTION_LINES = 400, 12, 60


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, and each name it imports from a module as module.name."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def packages() -> dict[str, set[str]]:
    """Each engine package and the packages its docstring says it may import."""
    allowed = {}
    for init in sorted(ENGINE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        found = re.search(r"May import: (.*)\.", doc)
        assert found, f"{init.parent.name}/__init__.py does not say what it may import"
        listed = found.group(1)
        allowed[init.parent.name] = set() if "nothing" in listed else set(listed.split(", "))
    return allowed


def test_each_package_imports_only_what_its_docstring_allows() -> None:
    allowed = packages()
    assert set(allowed) >= {"sql", "records", "offsets", "delta", "kinds", "status"}
    for name, may in allowed.items():
        for path in sorted((ENGINE / name).rglob("*.py")):
            for module in imported_modules(path):
                if not module.startswith(ENGINE_MODULE):
                    continue
                target = module.removeprefix(ENGINE_MODULE).split(".")[0]
                assert target in {name, "errors", *may}, (
                    f"{path.relative_to(ENGINE)} imports {module}; {name} may import "
                    f"{', '.join(sorted(may)) or 'nothing else'}"
                )


def test_the_layers_have_no_circle() -> None:
    allowed, placed = packages(), set()
    while len(placed) < len(allowed):
        ready = {name for name, may in allowed.items() if name not in placed and may <= placed}
        assert ready, f"these packages may import each other: {set(allowed) - placed}"
        placed |= ready


def test_the_stream_logic_imports_neither_pyspark_nor_py4j() -> None:
    """It talks to Spark only through SQL text, so it runs over Spark Connect too."""
    files = [*sorted(ENGINE.rglob("*.py")), *sorted((ADAPTER / "methods").glob("*.py"))]
    assert len(files) > 40
    for path in files:
        offending = {m for m in imported_modules(path) if m.split(".")[0] in ("pyspark", "py4j")}
        assert not offending, f"{path.relative_to(ADAPTER)} imports {offending}"


def test_the_jvm_start_aids_import_neither_dbt_nor_pyspark() -> None:
    """They run before dbt's session exists (and in the archive trainer's process)."""
    files = sorted((ADAPTER / "session" / "jvm").glob("*.py"))
    assert len(files) >= 3
    own = "dbt.adapters.spark_streams.session.jvm"
    for path in files:
        imported = {module for module in imported_modules(path) if not module.startswith(own)}
        offending = {m for m in imported if m.split(".")[0] in ("dbt", "dbt_common", "pyspark")}
        assert not offending, f"{path.name} imports {offending}"


def test_the_engine_imports_nothing_of_dbt_but_its_error_type() -> None:
    """Plain Python: dbt reaches the engine only through the adapter (methods/)."""
    for path in sorted(ENGINE.rglob("*.py")):
        for module in imported_modules(path):
            if module.startswith(("dbt.", "dbt_common")) and not module.startswith(ENGINE_MODULE):
                assert path.name == "errors.py" and module.startswith("dbt_common.exceptions"), (
                    f"{path.relative_to(ENGINE)} imports {module}"
                )


@pytest.mark.parametrize("path", sorted(ADAPTER.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_and_no_function_outgrows_a_reading(path: Path) -> None:
    lines = path.read_text().splitlines()
    assert len(lines) <= MOST_LINES, f"{path.relative_to(ADAPTER)}: {len(lines)} lines"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            assert length < MOST_FUNCTION_LINES, f"{path.name}:{node.name}: {length} lines"


def test_no_folder_holds_more_modules_than_a_reader_scans() -> None:
    for folder in {path.parent for path in ADAPTER.rglob("*.py")}:
        modules = list(folder.glob("*.py"))
        assert len(modules) <= MOST_MODULES, f"{folder.relative_to(ADAPTER)}: {len(modules)}"
