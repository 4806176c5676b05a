"""The README's layout section is the one the packages' docstrings give: a package added,
moved or redescribed without `scripts/layout.py --write` fails here."""

from scripts.layout import END, README, START, layout_markdown


def test_the_readme_describes_the_layout_the_code_has() -> None:
    readme = README.read_text()
    assert START in readme and END in readme
    written = readme.split(START, 1)[1].split(END, 1)[0].strip()
    assert written == layout_markdown(), "run: .venv/bin/python scripts/layout.py --write"


def test_every_engine_package_and_module_is_described() -> None:
    section = layout_markdown()
    for package in ("sql", "records", "offsets", "delta", "views", "files", "builds", "kinds"):
        assert f"- `streams/{package}/` (" in section
    kinds = "choose, consumers, delta_table, file_table, kind, request, table_stream, view"
    assert kinds in section
