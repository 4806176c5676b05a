"""The layout the README and the design page describe is the one the packages' docstrings
give: a package added, moved or redescribed without `scripts/layout.py --write` fails here."""

from scripts.layout import DESIGN, README, layout_markdown, section


def test_the_readme_and_the_design_page_describe_the_layout_the_code_has() -> None:
    fix = "run: .venv/bin/python scripts/layout.py --write"
    assert section(README) == layout_markdown(compact=True), fix
    assert section(DESIGN) == layout_markdown(), fix


def test_every_engine_package_and_module_is_described() -> None:
    full, compact = layout_markdown(), layout_markdown(compact=True)
    for package in ("sql", "records", "offsets", "delta", "views", "files", "builds", "kinds"):
        assert f"- `streams/{package}/` (" in full
        assert f"- `streams/{package}/`: " in compact
    kinds = "choose, consumers, delta_table, file_table, kind, request, table_stream, view"
    assert kinds in full
