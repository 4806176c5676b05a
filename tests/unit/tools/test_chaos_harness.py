"""`make chaos` runs outside `make test` (it needs a cluster, root and an hour): its plan, its
reading of dbt's output and its checks' SQL are held here, so that it does not rot between
runs."""

from pathlib import Path

from tests.chaos import stores
from tests.chaos.chaos import KINDS, REPEATED, Chaos, Tally, count, error_messages, figures, plan
from tests.chaos.checks import COMPARISONS, Verdict, check
from tests.chaos.faults import STORE_KINDS, Injection
from tests.soak.soak import Soak

RUN_OUTPUT = """\x1b[0m10:31:23  Runtime Error in model orders_audit (models/orders_audit.sql)
  Database Error
    The Spark Connect server stopped answering (UNAVAILABLE: port 49587) (found earlier)
\x1b[0m10:31:23
\x1b[0m10:31:23    Runtime Error in model customers_mirror (models/customers_mirror.sql)
  A file system Spark writes to is full (No space left on device): ...
"""


def test_each_run_gets_faults_of_one_kind() -> None:
    soak = Soak(seed=5)
    cycles = [plan(soak) for _ in range(200)]
    assert {c.injections[0].kind for c in cycles} == set(KINDS)
    for cycle in cycles:
        kinds = {injection.kind for injection in cycle.injections}
        assert len(kinds) == 1
        assert cycle.injections[0].after_starts >= 1
        if kinds == {"client"}:
            assert len(cycle.injections) == 1
    assert plan(Soak(seed=5)) == cycles[0]  # a seed replays its sequence


def test_a_run_gets_several_faults_of_a_kind_it_goes_on_through() -> None:
    soak = Soak(seed=6)
    for cycle in (plan(soak, ("worker", "disk")) for _ in range(50)):
        assert {i.kind for i in cycle.injections} <= {"worker", "disk"}
        assert REPEATED[0] <= len(cycle.injections) <= REPEATED[1]


def test_store_faults_stall_past_s3as_timeout_a_few_times() -> None:
    soak = Soak(seed=8)
    cycles = [plan(soak, STORE_KINDS) for _ in range(200)]
    assert {c.injections[0].kind for c in cycles} == set(STORE_KINDS)
    for cycle in cycles:
        if cycle.injections[0].kind == "stall":
            assert 1 <= len(cycle.injections) <= 3
            assert all(stores.STALL_S[0] <= i.hold <= stores.STALL_S[1] for i in cycle.injections)
            assert stores.STALL_S[0] > int(stores.TIMEOUT.removesuffix("s"))
        elif cycle.injections[0].kind in ("store", "slowdown", "postgres"):
            assert REPEATED[0] <= len(cycle.injections) <= REPEATED[1]
            assert all(1.0 <= i.hold <= 4.0 for i in cycle.injections)


def test_a_run_that_needed_no_recovery_counts_none() -> None:
    tally = Tally()
    faults = [Injection("worker", 1, 0.0, 1.0), Injection("worker", 0, 0.0, 1.0)]
    verdict = Verdict(lost=0, doubled=0, compared=70, wrong=())
    count(tally, faults, "worker", (0, 6, False), ["m"], verdict)
    count(tally, faults[:1], "worker", (2, 4, True), ["m"], verdict)
    assert (tally.injections, tally.runs, tally.failed, tally.succeeded) == (3, 2, 2, 10)
    assert (tally.recoveries, tally.rows_checked, tally.messages["m"]) == (1, 140, 2)


def test_the_message_past_dbts_headings_with_numbers_blurred() -> None:
    assert error_messages(RUN_OUTPUT) == [
        "The Spark Connect server stopped answering (UNAVAILABLE: port N) (found earlier)",
        "A file system Spark writes to is full (No space left on device): ...",
    ]


def test_the_check_counts_lost_and_doubled_rows_per_target() -> None:
    statements = []

    def run(statement: str) -> list[dict]:
        statements.append(statement)
        if statement.startswith("select ("):
            counts = {f"{t}_{what}": 0 for t in COMPARISONS for what in ("lost", "doubled")}
            return [{**counts, "customers_mirror_doubled": 2, "source_rows": 10,
                     **{f"{t}_rows": 10 for t in COMPARISONS}}]  # fmt: skip
        return []  # an empty registry

    verdict = check(run)
    assert (verdict.lost, verdict.doubled, verdict.compared) == (0, 2, 70)
    assert verdict.wrong == ("customers_mirror: 0 lost, 2 doubled",)
    assert not verdict.passed
    assert "except all" in statements[0]


def test_the_figures_give_each_kinds_row_and_where_the_minutes_went() -> None:
    tallies = {kind: Tally() for kind in KINDS}
    chaos = Chaos(seed=60, home=Path("."), project=Path("."), soak=Soak(seed=60), tallies=tallies)
    faults = [Injection("disk", 1, 0.0, 1.0)]
    count(chaos.tallies["disk"], faults, "disk", (3, 3, True), ["A file system ... full"],
          Verdict(compared=70))  # fmt: skip
    chaos.seconds["check"] = 90
    report = figures(chaos, 52)
    assert "seed 60: 0 cycles, 1 faults injected in 52 minutes" in report
    assert "| disk | 1 | 1 | 3 | 3 | 1 | 70 | 0 | 0 |" in report
    assert "| worker | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |" in report
    assert "Minutes by phase: check 1.5." in report
    assert "- disk, 1x: A file system ... full" in report
