"""scripts/engine_faults.py's faults still name text the engine holds: a fault whose text was
refactored away would stop the script at its turn (one of them did), so the check runs here,
with the unit tests, instead of after minutes of the other faults' runs."""

import pytest

from scripts.engine_faults import FAULTS, REPO


@pytest.mark.parametrize("fault", FAULTS, ids=[fault[0] for fault in FAULTS])
def test_each_fault_finds_its_text_and_its_test(fault: tuple) -> None:
    _, file, replacements, test, _ = fault
    source = (REPO / file).read_text()
    for text, replacement in replacements:
        assert text in source, f"{file} no longer holds {text!r}: update this fault"
        assert replacement != text
    assert (REPO / test).is_file()
