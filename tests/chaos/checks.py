"""What `make chaos` checks after every recovery, read straight from the cluster: each target
against its source (rows lost, rows doubled) and each registry offset against the offset its
target's newest build committed.

A target is compared as a multiset, both ways: a row of the source missing from the target is
lost, a row of the target the source does not hold (a second copy, an undeleted row) is
doubled. The queries are the soak's invariants (tests/integration/crash_project/tests and the
soak's extra tests), counted instead of listed.
"""

from collections.abc import Callable
from dataclasses import dataclass

from dbt.adapters.spark_streams.streams.offsets.commit import latest_commit_for
from dbt.adapters.spark_streams.streams.sql.run import Row

RunSql = Callable[[str], list[Row]]
RAW, TARGETS = "crash_raw", "crash"


def _both_ways(expected: str, actual: str) -> tuple[str, str]:
    return (
        f"select count(*) from ({expected} except all {actual})",
        f"select count(*) from ({actual} except all {expected})",
    )


CUSTOMERS = f"select id, name, tier from {RAW}.customers"
# target: (the query counting its lost rows, the one counting its doubled rows)
COMPARISONS = {
    "customers_mirror": _both_ways(
        CUSTOMERS, f"select id, name, tier from {TARGETS}.customers_mirror"
    ),
    "orders_audit": _both_ways(
        f"select id from {RAW}.orders", f"select id from {TARGETS}.orders_audit"
    ),
    "events_audit": _both_ways(
        f"select id, kind from {RAW}.events", f"select id, kind from {TARGETS}.events_audit"
    ),
    "paired_mirror": _both_ways(
        f"select id, amount, name, tier from {TARGETS}.paired",
        f"select id, amount, name, tier from {TARGETS}.paired_mirror",
    ),
    # an upsert target keeps deleted keys: every source row is in it, each key once
    "customers_merge": (
        f"select count(*) from ({CUSTOMERS} except all "
        f"select id, name, tier from {TARGETS}.customers_merge)",
        f"select coalesce(sum(copies - 1), 0) from (select count(*) as copies "
        f"from {TARGETS}.customers_merge group by id having count(*) > 1)",
    ),
    # the history's open rows are the source, exactly
    "customers_history": _both_ways(
        CUSTOMERS, f"select id, name, tier from {TARGETS}.customers_history where valid_to is null"
    ),
}


@dataclass
class Verdict:
    """One check of every target: rows compared, lost and doubled per target, and the streams
    whose registry offset is not the offset their target's newest build committed."""

    compared: int = 0
    lost: int = 0
    doubled: int = 0
    wrong: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return not (self.lost or self.doubled or self.wrong)


def check(run: RunSql) -> Verdict:
    """Every comparison in one statement (one round trip, one set of jobs), then the registry."""
    columns = [f"({CUSTOMERS.replace('select id, name, tier', 'select count(*)')}) as source_rows"]
    for target, (lost_sql, doubled_sql) in COMPARISONS.items():
        columns += [
            f"({lost_sql}) as {target}_lost",
            f"({doubled_sql}) as {target}_doubled",
            f"(select count(*) from {TARGETS}.{target}) as {target}_rows",
        ]
    counts = run("select " + ",\n  ".join(columns))[0]
    verdict = Verdict(compared=int(counts["source_rows"]))
    wrong = []
    for target in COMPARISONS:
        lost, doubled = int(counts[f"{target}_lost"]), int(counts[f"{target}_doubled"])
        verdict.lost += lost
        verdict.doubled += doubled
        verdict.compared += int(counts[f"{target}_rows"])
        if lost or doubled:
            wrong.append(f"{target}: {lost} lost, {doubled} doubled")
    verdict.wrong = (*wrong, *registry_behind(run))
    return verdict


def registry_behind(run: RunSql) -> list[str]:
    """The streams whose registry offset differs from the one their target's newest build
    committed (the registry is rolled forward from the targets by every build, so after a
    successful run none may lag)."""
    rows = run(f"select name, consumer, target_table, offset_version from {TARGETS}.dbt_streams")
    behind = []
    for row in rows:
        commit = latest_commit_for(run, row["target_table"], row["consumer"])
        committed = (
            {record.name: record.offset_version for record in commit.records} if commit else {}
        )
        if row["name"] in committed and committed[row["name"]] != row["offset_version"]:
            behind.append(
                f"{row['name']}: registry at {row['offset_version']}, target committed "
                f"{committed[row['name']]}"
            )
    return behind
