"""The compatibility matrix's plan and report (scripts/matrix.py), without building anything."""

import os
from pathlib import Path

import pytest

from scripts import matrix


def test_every_end_of_each_range_is_a_combination() -> None:
    names = [combination.name for combination in matrix.combinations()]
    assert names == [
        "dbt-1.11+spark-4.0", "dbt-1.11+spark-4.1", "dbt-1.11+spark-4.2",
        "dbt-1.12+spark-4.0", "dbt-1.12+spark-4.1", "dbt-1.12+spark-4.2",
    ]  # fmt: skip
    for combination in matrix.combinations():
        pins = "".join(path.read_text() for path in combination.constraints)
        assert "dbt-core==" in pins and "pyspark==" in pins, combination.name


def test_connect_servers_for_the_older_spark_lines_and_the_peer_suite_once() -> None:
    connect = [c.name for c in matrix.combinations() if c.connect]
    peer = [c.name for c in matrix.combinations() if c.peer]
    assert connect == ["dbt-1.11+spark-4.0", "dbt-1.11+spark-4.1"]
    assert peer == ["dbt-1.12+spark-4.2"]


def test_ci_runs_every_spark_line_and_every_dbt_line_and_all_but_the_plain_builds() -> None:
    ci = [c for c in matrix.combinations() if c.ci]
    assert [c.name for c in ci] == [
        "dbt-1.11+spark-4.0", "dbt-1.11+spark-4.1", "dbt-1.11+spark-4.2", "dbt-1.12+spark-4.2",
    ]  # fmt: skip
    assert {c.spark for c in ci} == set(matrix.SPARK_LINES)
    assert {c.dbt for c in ci} == set(matrix.DBT_LINES)
    left = [c for c in matrix.combinations() if not c.ci]
    assert not any(c.connect or c.thrift or c.peer for c in left)
    assert [c.name for c in matrix.lane_order(ci)] == [
        "dbt-1.12+spark-4.2", "dbt-1.11+spark-4.2", "dbt-1.11+spark-4.1", "dbt-1.11+spark-4.0",
    ]  # fmt: skip


def test_lanes_order_spark_lines_by_number_not_by_text() -> None:
    lines = [matrix.Combination(matrix.DBT_LINES[-1], spark) for spark in ("4.1", "4.10", "4.9")]
    assert not any(c.peer or c.thrift or c.connect for c in lines)
    assert [c.spark for c in matrix.lane_order(lines)] == ["4.10", "4.9", "4.1"]


def test_the_newest_spark_with_the_oldest_dbt_runs_over_a_thrift_server(logs: Path) -> None:
    thrift = [c for c in matrix.combinations() if c.thrift]
    assert [c.name for c in thrift] == ["dbt-1.11+spark-4.2"]
    assert thrift[0].extras == "dev,connect,thrift"
    assert {c.extras for c in matrix.combinations() if not c.thrift} == {"dev,connect"}
    command = matrix.compat_command(thrift[0], "/venv/bin/python")
    server = str(logs / "dbt-1.11+spark-4.2-server")
    assert command == [
        "/venv/bin/python", "scripts/with_thrift.py", server, "--",
        "/venv/bin/python", "-u", "scripts/compat_run.py", str(logs / "dbt-1.11+spark-4.2"),
        "--thrift",
    ]  # fmt: skip
    connect = matrix.compat_command(matrix.Combination("1.11", "4.0"), "py")
    assert connect == ["py", "-u", "scripts/compat_run.py", str(logs / "dbt-1.11+spark-4.0"),
                       "--connect"]  # fmt: skip
    (logs / "dbt-1.11+spark-4.2.log").write_text("passed\n")
    steps = matrix.summary(thrift[0], True, 3.0).steps
    assert steps == (
        "the compatibility project, over `thrift` (a Spark Thrift Server, killed as a MERGE "
        "commits)"
    )


def test_a_failed_combination_prints_its_steps_and_errors(logs: Path) -> None:
    thrift = next(c for c in matrix.combinations() if c.thrift)
    (logs / "dbt-1.11+spark-4.2.log").write_text(
        "$ python -m pip install --quiet ...\n"
        "Collecting dbt-core\n"
        "  dbt build --target thrift --vars {round: 0}: exit -9, 40 s\n"
        "  dbt build --target thrift --vars {round: 1}: exit 1, 30 s\n"
        "FAILED: dbt build --target thrift --vars {round: 1} exited 1:\n"
        "17:01:02  1 of 9 START sql stream_incremental model compat.customers_mirror\n"
        "17:01:09  1 of 9 ERROR creating sql stream_incremental model compat.customers_mirror\n"
        "17:01:20  Runtime Error in model customers_mirror (models/customers_mirror.sql)\n"
        "17:01:20    [DELTA_CONCURRENT_APPEND] Files were added by a concurrent update.\n"
        "17:01:20  Done. PASS=7 WARN=0 ERROR=1 SKIP=3 TOTAL=11\n"
    )  # fmt: skip
    excerpt = matrix.failure_excerpt(matrix.Result(thrift, False, 2.0, "", ""))
    assert excerpt.splitlines() == [
        f"dbt-1.11+spark-4.2 failed; from {logs / 'dbt-1.11+spark-4.2.log'}:",
        "  dbt build --target thrift --vars {round: 0}: exit -9, 40 s",
        "  dbt build --target thrift --vars {round: 1}: exit 1, 30 s",
        "FAILED: dbt build --target thrift --vars {round: 1} exited 1:",
        "17:01:09  1 of 9 ERROR creating sql stream_incremental model compat.customers_mirror",
        "17:01:20  Runtime Error in model customers_mirror (models/customers_mirror.sql)",
        "17:01:20    [DELTA_CONCURRENT_APPEND] Files were added by a concurrent update.",
        "17:01:20  Done. PASS=7 WARN=0 ERROR=1 SKIP=3 TOTAL=11",
    ]


def test_the_pins_are_the_ends_setup_cfg_accepts() -> None:
    setup = (matrix.REPO / "setup.cfg").read_text()
    assert "dbt-core>=1.11.2,<1.13" in setup and "pyspark>=4.0.1,<4.3" in setup
    oldest = (matrix.REPO / "constraints" / "dbt-1.11.txt").read_text()
    assert "dbt-core==1.11.2" in oldest


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(matrix, "WORK", tmp_path)
    return tmp_path


def test_a_report_row_says_the_versions_the_steps_and_the_verdict(logs: Path) -> None:
    newest = matrix.Combination("1.12", "4.2")
    (logs / f"{newest.name}.log").write_text(
        "$ pip install ...\n"
        "dbt-core 1.12.0, PySpark 4.2.0, Delta io.delta:delta-spark_4.2_2.13:4.4.0\n"
        "passed\n=========== 55 passed, 94 skipped in 220.61s (0:03:40) ===========\n"
    )
    oldest = matrix.Combination("1.11", "4.0")
    (logs / f"{oldest.name}.log").write_text(
        "$ pip install ...\nERROR: no matching distribution\n"
    )
    rows = matrix.table(
        [matrix.summary(newest, True, 8.46), matrix.summary(oldest, False, 0.4)]
    ).splitlines()
    assert rows[2] == (
        "| `dbt-1.12+spark-4.2` | dbt-core 1.12.0, PySpark 4.2.0, Delta "
        "io.delta:delta-spark_4.2_2.13:4.4.0 | the compatibility project, dbt-spark's tests "
        "(55 passed, 94 skipped) | passed | 8.5 |"
    )
    assert rows[3] == (
        "| `dbt-1.11+spark-4.0` | dbt-core 1.11, Spark 4.0 | the compatibility project, over "
        "Spark Connect | **failed** | 0.4 |"
    )


def test_the_page_gets_the_table_between_its_markers(
    logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"before\n{matrix.BEGIN}\nold table\n{matrix.END}\nafter\n")
    monkeypatch.setattr(matrix, "PAGE", page)
    combination = matrix.Combination("1.11", "4.2")
    (logs / f"{combination.name}.log").write_text("dbt-core 1.11.2, PySpark 4.2.0, Delta x\n")
    matrix.write_page([matrix.summary(combination, True, 2.3)])
    text = page.read_text()
    assert text.startswith("before\n<!-- matrix: begin -->\n| combination |")
    assert "old table" not in text and "| passed | 2.3 |" in text
    assert text.endswith("<!-- matrix: end -->\nafter\n")


def test_a_combinations_replaced_virtualenvs_go_once_a_day_old(tmp_path: Path) -> None:
    now, day = 1_800_000_000.0, matrix.STALE_AFTER.total_seconds()
    made = {
        "dbt-1.11+spark-4.0-aaaa": now - 2 * day,  # replaced two days ago: goes
        "dbt-1.11+spark-4.0-bbbb": now - day / 2,  # replaced today (a clone may use it): stays
        "dbt-1.11+spark-4.0-cccc": now,  # the new one
        "dbt-1.11+spark-4.1-dddd": now - 9 * day,  # another combination's: stays
    }
    for name, when in made.items():
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (when, when))
    stale = matrix.stale_environments(tmp_path / "dbt-1.11+spark-4.0-cccc", now)
    assert stale == [tmp_path / "dbt-1.11+spark-4.0-aaaa"]
