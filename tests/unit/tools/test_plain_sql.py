"""The stream engine talks to Spark only through SQL text, so it runs over Spark Connect too."""

import ast
from pathlib import Path

import dbt.adapters.spark_streams as package

ENGINE = Path(package.__file__).parent
FORBIDDEN = ("pyspark", "py4j")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_stream_logic_imports_neither_pyspark_nor_py4j() -> None:
    files = [*sorted((ENGINE / "streams").rglob("*.py")), ENGINE / "stream_methods.py"]
    assert len(files) > 5
    for path in files:
        offending = {m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN}
        assert not offending, f"{path.name} imports {offending}"
