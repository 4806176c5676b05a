"""Ten stream models built with `--threads 4`, round after round, against a model in Python.

Every dbt thread builds on a Spark session of its own, so one build's write confs (its offsets
in `userMetadata`, Delta's idempotency pair, the file size cap) never reach another thread's
write. The first run also creates the registry from several threads at once. Two models bound
their MERGE by key ranges (`key_ranges=true`), each asking its own change set for them while the
other threads build. After every run each target is compared with what the source changes
imply, computed here independently:

- mirrors (`apply_changes`) equal their source;
- `customers_merge` (`merge` of the INSERT rows) holds every key's newest value, deleted keys
  included;
- the net-change logs (`append` of standard streams, keyed and keyless) hold, for the run,
  exactly the difference between the source before and after it;
- the audits (`append` of append_only streams) hold every inserted row exactly once;
- `latest_orders` (`apply_cdc` of the inserted orders, by customer, sequenced by order id)
  holds each customer's newest order.

A last run with nothing pending must write nothing and move no offset. `make test` runs one
round of changes from a fixed seed; `make fuzz` eight with a random one (THREADS_ROUNDS,
THREADS_SEED).
"""

import os
import random
from collections import Counter
from dataclasses import dataclass, field

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import DeltaProject, merge_on_clauses, sources_yml

ROUNDS = int(os.environ.get("THREADS_ROUNDS", "1"))
SEED = int(os.environ.get("THREADS_SEED", "7"))
THREADS = ["--threads", "4"]

SOURCES = sources_yml("shop", "customers", "orders", "tags")


def model(strategy: str, select: str, stream_args: str, **config: str) -> str:
    settings = "".join(f", {key}={value}" for key, value in config.items())
    return (
        f"{{{{ config(materialized='stream_incremental', incremental_strategy='{strategy}'"
        f"{settings}) }}}}\n"
        f"select {select} from {{{{ stream({stream_args}) }}}}"
    )


ROUND = "{{ var('batch', 0) }} as batch"
MODELS = {
    "customers_mirror": model(
        "apply_changes",
        "id, name, tier, metadata_action, metadata_isupdate",
        "source('shop', 'customers')",
        unique_key="'id'",
    ),
    "orders_mirror": model(
        "apply_changes",
        "*",
        "source('shop', 'orders')",
        unique_key="'id'",
        file_rows="3",
        key_ranges="true",
    ),
    "customers_merge": model(
        "merge",
        "id, name, tier",
        "source('shop', 'customers'), name='customers_for_merge'",
        unique_key="'id'",
        key_ranges="true",
    )
    + " where metadata_action = 'INSERT'",
    "customers_log": model(
        "append",
        f"id, name, tier, metadata_action, {ROUND}",
        "source('shop', 'customers'), unique_key='id'",
    ),
    "orders_log": model(
        "append",
        f"id, customer_id, amount, metadata_action, {ROUND}",
        "source('shop', 'orders'), unique_key='id'",
    ),
    "tags_log": model("append", f"tag, n, metadata_action, {ROUND}", "source('shop', 'tags')"),
    "customers_audit": model(
        "append", "id, name, tier", "source('shop', 'customers'), mode='append_only'"
    ),
    "orders_audit": model(
        "append", "id, customer_id, amount", "source('shop', 'orders'), mode='append_only'"
    ),
    "tags_audit": model("append", "tag, n", "source('shop', 'tags'), mode='append_only'"),
    # apply_cdc: each customer's newest order (by id) from the orders inserted, as events
    "latest_orders": model(
        "apply_cdc",
        "id, customer_id, amount",
        "source('shop', 'orders'), mode='append_only'",
        unique_key="'customer_id'",
        sequence_by="'id'",
    ),
}
TARGETS = tuple(MODELS)


@dataclass
class Shop:
    """The sources as Python holds them, and what the targets must hold."""

    customers: dict[int, tuple] = field(default_factory=dict)
    orders: dict[int, tuple] = field(default_factory=dict)
    tags: Counter = field(default_factory=Counter)
    merged: dict[int, tuple] = field(default_factory=dict)
    inserted: dict[str, Counter] = field(
        default_factory=lambda: {name: Counter() for name in ("customers", "orders", "tags")}
    )

    def consumed(self) -> None:
        """A run consumed everything: the merge target takes every present key's value."""
        self.merged.update(self.customers)


def literal(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else "null" if value is None else str(value)


def values(rows: list[tuple]) -> str:
    return ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)


def change_sources(project, shop: Shop, rng: random.Random, next_id: list[int]) -> None:
    """A round of inserts, updates (some to the same values, some of rows inserted in the
    round) and deletes, applied to the tables and to `shop` alike: a statement of
    each kind a table, so each source has several commits pending, in few statements."""
    schema = project.test_schema
    new = []
    for _ in range(rng.randint(2, 6)):
        next_id[0] += 1
        new.append((next_id[0], rng.choice(["ann", "bob", None]), rng.randint(1, 3)))
    project.run_sql(f"insert into {schema}.customers values {values(new)}")
    shop.customers.update({row[0]: row for row in new})
    shop.inserted["customers"].update(new)
    if shop.customers:
        key = rng.choice(sorted(shop.customers))
        tier = rng.choice([shop.customers[key][2], 9])  # sometimes a no-op update
        project.run_sql(f"update {schema}.customers set tier = {tier} where id = {key}")
        shop.customers[key] = (*shop.customers[key][:2], tier)
    if len(shop.customers) > 2 and rng.random() < 0.6:
        key = rng.choice(sorted(shop.customers))
        project.run_sql(f"delete from {schema}.customers where id = {key}")
        del shop.customers[key]
    order = (next_id[0] * 10, rng.choice(sorted(shop.customers) or [0]), rng.randint(1, 99))
    project.run_sql(f"insert into {schema}.orders values {values([order])}")
    shop.orders[order[0]] = order
    shop.inserted["orders"][order] += 1
    key = rng.choice(sorted(shop.orders))
    project.run_sql(f"update {schema}.orders set amount = amount + 1 where id = {key}")
    shop.orders[key] = (*shop.orders[key][:2], shop.orders[key][2] + 1)
    tag = (rng.choice(["red", "blue"]), rng.randint(1, 2))
    project.run_sql(f"insert into {schema}.tags values {values([tag, tag])}")
    shop.tags[tag] += 2
    shop.inserted["tags"][tag] += 2
    if shop.tags and rng.random() < 0.5:
        gone = rng.choice(sorted(shop.tags))
        project.run_sql(f"delete from {schema}.tags where tag = '{gone[0]}' and n = {gone[1]}")
        del shop.tags[gone]


def rows(project, sql: str) -> list[tuple]:
    return [tuple(row) for row in project.run_sql(sql, fetch="all")]


def table(project, name: str, columns: str, where: str = "true") -> Counter:
    return Counter(
        rows(project, f"select {columns} from {project.test_schema}.{name} where {where}")
    )


def net_log(before: Counter, after: Counter) -> Counter:
    """The rows a net-change log must get for a run: DELETEs of what went, INSERTs of what came."""
    gone = before - after
    came = after - before
    return Counter(
        {
            **{(*row, "DELETE"): n for row, n in gone.items()},
            **{(*r, "INSERT"): n for r, n in came.items()},
        }
    )


def keyed_rows(rows_by_key: dict[int, tuple]) -> Counter:
    return Counter(rows_by_key.values())


def check_targets(project, shop: Shop, before: Shop | None, round_: int) -> None:
    """Every target against what the Python model says."""
    assert table(project, "customers_mirror", "id, name, tier") == keyed_rows(shop.customers)
    assert table(project, "orders_mirror", "id, customer_id, amount") == keyed_rows(shop.orders)
    assert table(project, "customers_merge", "id, name, tier") == keyed_rows(shop.merged)
    assert table(project, "customers_audit", "id, name, tier") == shop.inserted["customers"]
    assert table(project, "orders_audit", "id, customer_id, amount") == shop.inserted["orders"]
    assert table(project, "tags_audit", "tag, n") == shop.inserted["tags"]
    newest: dict[int, tuple] = {}
    for order in shop.inserted["orders"]:
        if order[1] not in newest or order[0] > newest[order[1]][0]:
            newest[order[1]] = order
    assert table(project, "latest_orders", "id, customer_id, amount") == keyed_rows(newest)
    logs = {
        "customers_log": ("id, name, tier", "customers", keyed_rows),
        "orders_log": ("id, customer_id, amount", "orders", keyed_rows),
        "tags_log": ("tag, n", "tags", Counter),
    }
    for log, (columns, source, as_bag) in logs.items():
        got = table(project, log, f"{columns}, metadata_action", f"batch = {round_}")
        old = as_bag(getattr(before, source)) if before else Counter()
        assert got == net_log(old, as_bag(getattr(shop, source))), log


def ranged_merges(log: str) -> set[str]:
    """The targets whose MERGE in a `--debug` log bounds its ON clause by key ranges."""
    return {name for name, on in merge_on_clauses(log).items() if " and (t.`id` between " in on}


def snapshot(shop: Shop) -> Shop:
    return Shop(dict(shop.customers), dict(shop.orders), Counter(shop.tags))


def offsets(project) -> dict[str, int]:
    found = rows(project, f"select name, offset_version from {project.test_schema}.dbt_streams")
    return dict(found)


def target_versions(project) -> dict[str, int]:
    schema = project.test_schema
    return {
        name: rows(project, f"describe history {schema}.{name} limit 1")[0][0] for name in TARGETS
    }


class TestStreamModelsWithThreads(DeltaProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES, **{f"{name}.sql": sql for name, sql in MODELS.items()}}

    def test_rounds_with_four_threads(self, project):
        schema = project.test_schema
        project.run_sql(
            f"create table {schema}.customers (id int, name string, tier int) using delta"
        )
        project.run_sql(
            f"create table {schema}.orders (id int, customer_id int, amount int) using delta"
        )
        project.run_sql(f"create table {schema}.tags (tag string, n int) using delta")
        shop, rng, next_id = Shop(), random.Random(SEED), [0]
        change_sources(project, shop, rng, next_id)
        shop.inserted = {name: Counter() for name in shop.inserted}  # before the streams exist

        results = run_dbt(["run", *THREADS])
        assert len(results.results) == len(MODELS)
        shop.inserted = {
            "customers": Counter(shop.customers.values()),
            "orders": Counter(shop.orders.values()),
            "tags": Counter(shop.tags),
        }
        shop.consumed()
        check_targets(project, shop, None, 0)

        for round_ in range(1, ROUNDS + 1):
            before = snapshot(shop)
            change_sources(project, shop, rng, next_id)
            _, log = run_dbt_and_capture(
                ["--debug", "run", *THREADS, "--vars", f"{{batch: {round_}}}"]
            )
            assert ranged_merges(log) == {"orders_mirror", "customers_merge"}
            shop.consumed()
            check_targets(project, shop, before, round_)

        streams, versions = offsets(project), target_versions(project)
        assert len(streams) == len(MODELS)
        results = run_dbt(["run", *THREADS, "--vars", f"{{batch: {ROUNDS + 1}}}"])
        assert {result.message for result in results.results} == {"OK, no pending changes"}
        assert offsets(project) == streams
        assert target_versions(project) == versions
        check_targets(project, shop, snapshot(shop), ROUNDS + 1)
