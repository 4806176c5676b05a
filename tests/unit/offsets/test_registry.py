"""The registry's own statements (no JVM): the log and its view created once, an old registry
table moved into the log, records written as literals and read back, compaction at a file
count, streams dropped, and creation retried when another process creates it first."""

from datetime import datetime

import pytest

from dbt.adapters.spark_streams.streams.offsets import registry as registry_module
from dbt.adapters.spark_streams.streams.offsets.registry import Registry, StreamRecord
from dbt.adapters.spark_streams.streams.sql.quoting import quote, quote_path
from dbt.adapters.spark_streams.streams.sql.run import Row


class Catalog:
    """Answers SHOW TABLES / SHOW VIEWS, DESCRIBE DETAIL and the log's reads; fails the
    first `failing_creates` CREATE TABLE statements as a concurrent creator would."""

    def __init__(
        self,
        tables: tuple[str, ...] = (),
        views: tuple[str, ...] = (),
        files: int = 1,
        log_rows: list[Row] | None = None,
        failing_creates: int = 0,
    ) -> None:
        self.tables, self.views, self.files = tables, views, files
        self.log_rows = log_rows or []
        self.failing_creates = failing_creates
        self.statements: list[str] = []

    def __call__(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("create table") and self.failing_creates:
            self.failing_creates -= 1
            raise RuntimeError("[TABLE_OR_VIEW_ALREADY_EXISTS] created by another process")
        if sql.startswith("show tables"):
            return [{"tableName": name} for name in self.tables]
        if sql.startswith("show views"):
            return [{"viewName": name} for name in self.views]
        if sql.startswith("describe detail"):
            return [{"numFiles": self.files}]
        if sql.startswith("select * from"):
            return self.log_rows
        return []


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module.time, "sleep", lambda _: None)


def test_the_log_and_its_view_are_created_once() -> None:
    catalog = Catalog()
    registry = Registry(catalog, "shop")
    registry.ensure()
    registry.ensure()
    assert catalog.statements[:3] == [
        "create schema if not exists `shop`",
        "create table if not exists `shop`.`dbt_streams_log` ("
        + registry_module.REGISTRY_COLUMNS
        + ", recorded_at timestamp) using delta",
        "show views in `shop` like 'dbt_streams'",
    ]
    [view] = [s for s in catalog.statements if s.startswith("create view")]
    assert view == (
        "create view if not exists `shop`.`dbt_streams` as select name, schema, source_table, "
        "source_id, source_type, mode, unique_key, consumer, target_table, offset_version, "
        "offset_timestamp, txn_version, created_on, last_consumed_on from (select *, "
        "row_number() over (partition by name order by txn_version desc, recorded_at desc) "
        "as newest from `shop`.`dbt_streams_log`) where newest = 1"
    )
    assert len(catalog.statements) == 5  # schema, log, show views, show tables, view


def test_an_existing_view_is_kept() -> None:
    catalog = Catalog(views=("dbt_streams",))
    Registry(catalog, "shop").ensure()
    assert not any(s.startswith(("create view", "show tables")) for s in catalog.statements)


def test_a_registry_kept_as_a_table_moves_into_the_log() -> None:
    catalog = Catalog(tables=("dbt_streams",))
    Registry(catalog, "shop").ensure()
    assert catalog.statements[3:6] == [
        "show tables in `shop` like 'dbt_streams'",
        "insert into `shop`.`dbt_streams_log` select *, now() from `shop`.`dbt_streams`",
        "drop table `shop`.`dbt_streams`",
    ]
    assert catalog.statements[6].startswith("create view if not exists `shop`.`dbt_streams`")


def test_creation_is_retried_when_another_process_created_it_first() -> None:
    catalog = Catalog(failing_creates=registry_module.ENSURE_ATTEMPTS - 1)
    registry = Registry(catalog, "shop")
    registry.ensure()
    creates = [s for s in catalog.statements if s.startswith("create table")]
    assert len(creates) == registry_module.ENSURE_ATTEMPTS
    registry.ensure()
    assert len([s for s in catalog.statements if s.startswith("create table")]) == len(creates)


def test_creation_fails_after_its_last_attempt() -> None:
    catalog = Catalog(failing_creates=registry_module.ENSURE_ATTEMPTS)
    registry = Registry(catalog, "shop")
    with pytest.raises(RuntimeError, match="ALREADY_EXISTS"):
        registry.ensure()
    catalog.failing_creates = 0
    registry.ensure()  # not marked as created: the next use tries again
    creates = [s for s in catalog.statements if s.startswith("create table")]
    assert len(creates) == registry_module.ENSURE_ATTEMPTS + 1


def test_another_table_of_the_registry_is_created_once() -> None:
    catalog = Catalog()
    registry = Registry(catalog, "shop")
    assert registry.ensure_table("dbt_stream_files", "name string") == "`shop`.`dbt_stream_files`"
    registry.ensure_table("dbt_stream_files", "name string")
    assert catalog.statements == [
        "create table if not exists `shop`.`dbt_stream_files` (name string) using delta"
    ]


@pytest.mark.parametrize(("files", "optimized"), [(63, False), (64, True), (200, True)])
def test_the_log_is_compacted_at_64_files(files: int, optimized: bool) -> None:
    catalog = Catalog(views=("dbt_streams",), files=files)
    Registry(catalog, "shop").compact()
    assert ("optimize `shop`.`dbt_streams_log`" in catalog.statements) == optimized


def test_records_are_written_as_literals() -> None:
    catalog = Catalog(views=("dbt_streams",))
    stream = record("o'rders", 16)
    Registry(catalog, "shop").append([stream])
    [insert] = [s for s in catalog.statements if s.startswith("insert into")]
    assert insert == (
        "insert into `shop`.`dbt_streams_log` values ('o\\'rders', 'shop', '`raw`.`orders`', "
        "'id-1', 'delta', 'standard', '[\"id\"]', 'model.shop.o\\'rders', '`shop`.`o\\'rders`', "
        "5, timestamp'2026-11-21 12:00:00.000000', 16, timestamp'2026-11-21 12:00:00.000000', "
        "timestamp'2026-11-21 12:00:00.000000', now())"
    )
    assert "describe detail `shop`.`dbt_streams_log`" in catalog.statements  # txn 16


def test_a_record_never_consumed_writes_null() -> None:
    catalog = Catalog(views=("dbt_streams",))
    never = StreamRecord(**{**vars(record("orders", 1)), "last_consumed_on": None})
    Registry(catalog, "shop").append([never])
    [insert] = [s for s in catalog.statements if s.startswith("insert into")]
    assert insert.endswith("timestamp'2026-11-21 12:00:00.000000', null, now())")
    Registry(catalog, "shop").append([])
    assert len([s for s in catalog.statements if s.startswith("insert into")]) == 1


def row_of(stream: StreamRecord) -> Row:
    return {**vars(stream), "unique_key": '["id"]', "recorded_at": datetime(2026, 11, 21)}


def test_a_stream_is_read_from_the_log_newest_first() -> None:
    catalog = Catalog(views=("dbt_streams",), log_rows=[row_of(record("orders", 3))])
    registry = Registry(catalog, "shop")
    assert registry.get("orders") == record("orders", 3)
    assert catalog.statements[-1] == (
        "select * from `shop`.`dbt_streams_log` where name = 'orders' "
        "order by txn_version desc, recorded_at desc limit 1"
    )
    assert Registry(Catalog(views=("dbt_streams",)), "shop").get("orders") is None


def test_all_streams_are_read_from_the_view() -> None:
    catalog = Catalog(views=("dbt_streams",), log_rows=[row_of(record("orders", 3))])
    assert Registry(catalog, "shop").all() == [record("orders", 3)]
    assert catalog.statements[-1] == "select * from `shop`.`dbt_streams`"


def test_all_streams_include_the_state_queued_for_the_flush() -> None:
    logged = [row_of(record("orders", 3)), row_of(record("items", 7))]
    registry = Registry(Catalog(views=("dbt_streams",), log_rows=logged), "shop")
    registry.queue([record("orders", 4, offset=9), record("new", 1)])
    registry.queue_if_behind([record("items", 6, offset=2)])  # older than the log's row
    assert registry.all() == [record("orders", 4, offset=9), record("items", 7), record("new", 1)]


def test_a_dropped_stream_leaves_the_queue_and_the_log() -> None:
    catalog = Catalog(views=("dbt_streams",))
    registry = Registry(catalog, "shop")
    registry.queue([record("orders", 3)])
    registry.queue_if_behind([record("orders", 2)])
    registry.drop("orders")
    assert not registry.has_queued()
    assert catalog.statements[-1] == "delete from `shop`.`dbt_streams_log` where name = 'orders'"


def test_an_older_state_queued_later_does_not_replace_a_newer_one() -> None:
    registry = Registry(Catalog(views=("dbt_streams",)), "shop")
    registry.queue([record("orders", 5, offset=9)])
    registry.queue([record("orders", 4, offset=7)])
    assert registry.get("orders") == record("orders", 5, offset=9)


def test_identifiers_with_backticks_are_quoted_doubling_them() -> None:
    assert quote("a`b") == "`a``b`"
    assert quote_path("s`x", "t") == "`s``x`.`t`"


NOW = datetime(2026, 11, 21, 12, 0, 0)


def record(name: str, txn: int, offset: int = 5) -> StreamRecord:
    return StreamRecord(
        name=name,
        schema="shop",
        source_table="`raw`.`orders`",
        source_id="id-1",
        source_type="delta",
        mode="standard",
        unique_key=("id",),
        consumer=f"model.shop.{name}",
        target_table=f"`shop`.`{name}`",
        offset_version=offset,
        offset_timestamp=NOW,
        txn_version=txn,
        created_on=NOW,
        last_consumed_on=NOW,
    )


class FakeSpark:
    """Records statements; the log holds `stored` (name -> newest txn_version)."""

    def __init__(self, stored: dict[str, int] | None = None, fail_inserts: int = 0) -> None:
        self.statements: list[str] = []
        self.stored = stored or {}
        self.fail_inserts = fail_inserts

    def run(self, sql: str) -> list[Row]:
        self.statements.append(sql)
        if sql.startswith("show "):
            return [{"namespace": "shop", "viewName": "dbt_streams"}]
        if sql.startswith("insert into") and self.fail_inserts:
            self.fail_inserts -= 1
            raise RuntimeError("ConcurrentAppendException")
        if sql.startswith("describe detail"):
            return [{"numFiles": 1}]
        if "max(txn_version)" in sql:
            stored = self.stored.items()
            return [{"name": n, "txn_version": t} for n, t in stored if f"'{n}'" in sql]
        return []

    def inserts(self) -> list[str]:
        return [s for s in self.statements if s.startswith("insert into")]


def test_a_run_of_many_models_appends_once_with_the_newest_offset_of_each() -> None:
    spark = FakeSpark()
    registry = Registry(spark.run, "shop")
    registry.queue([record("orders", 3, offset=7)])
    registry.queue([record("customers", 2)])
    registry.queue([record("orders", 4, offset=9)])  # a later build of the same consumer
    assert registry.get("orders") == record("orders", 4, offset=9)  # queued, not yet written

    new, rolled = registry.flush()

    assert sorted(r.name for r in new) == ["customers", "orders"] and rolled == []
    [insert] = spark.inserts()
    assert insert.count("'orders'") == 1 and ", 9, " in insert
    assert not any("max(txn_version)" in s for s in spark.statements)  # new rows need no read
    assert not registry.has_queued()


def test_a_roll_forward_is_written_only_where_the_log_is_behind() -> None:
    spark = FakeSpark(stored={"orders": 3, "customers": 5})
    registry = Registry(spark.run, "shop")
    registry.queue_if_behind([record("orders", 4), record("customers", 5)])
    registry.queue_if_behind([record("refunds", 1)])  # never recorded at all

    new, rolled = registry.flush()

    assert new == [] and sorted(r.name for r in rolled) == ["orders", "refunds"]
    [insert] = spark.inserts()
    assert "'customers'" not in insert


def test_a_committed_offset_superseded_by_a_new_one_is_not_checked() -> None:
    spark = FakeSpark(stored={"orders": 1})
    registry = Registry(spark.run, "shop")
    registry.queue_if_behind([record("orders", 3)])  # the target's last commit
    registry.queue([record("orders", 4)])  # this build's commit

    new, rolled = registry.flush()

    assert [r.txn_version for r in new] == [4] and rolled == []
    assert not any("max(txn_version)" in s for s in spark.statements)


def test_the_same_transaction_queued_twice_is_written_once_as_queued_last() -> None:
    """A build's commit found again (the same transaction: a retried flush, or the roll-
    forward of the commit this build just queued) is written once, as queued last."""
    spark = FakeSpark(stored={"orders": 1})
    registry = Registry(spark.run, "shop")
    registry.queue([record("orders", 4, offset=7)])
    registry.queue([record("orders", 4, offset=8)])
    registry.queue_if_behind([record("orders", 4, offset=8)])

    new, rolled = registry.flush()

    assert new == [record("orders", 4, offset=8)] and rolled == []
    [insert] = spark.inserts()
    assert insert.count("'orders'") == 1 and ", 8, " in insert
    assert not any("max(txn_version)" in s for s in spark.statements)


def test_the_append_goes_without_a_checksum_file_where_confs_can_be_set() -> None:
    """On an object store Delta's checksum file costs most of the append's requests."""
    spark = FakeSpark()
    registry = Registry(spark.run, "shop")
    registry.queue([record("orders", 3)])
    with_confs: list[tuple[str, dict[str, str]]] = []

    registry.flush(lambda sql, confs: with_confs.append((sql, confs)) or spark.run(sql))

    [(statement, confs)] = with_confs
    assert statement.startswith("insert into `shop`.`dbt_streams_log` values ('orders'")
    assert confs == {"spark.databricks.delta.writeChecksumFile.enabled": "false"}
    assert spark.inserts() == [statement]


def test_a_failed_append_keeps_the_queue_for_a_retry() -> None:
    spark = FakeSpark(fail_inserts=1)
    registry = Registry(spark.run, "shop")
    registry.queue([record("orders", 3)])

    with pytest.raises(RuntimeError):
        registry.flush()
    assert registry.has_queued()
    new, _ = registry.flush()
    assert [r.name for r in new] == ["orders"] and len(spark.inserts()) == 2


def test_every_16th_transaction_checks_the_log_for_compaction() -> None:
    spark = FakeSpark()
    registry = Registry(spark.run, "shop")
    registry.queue([record("orders", 15)])
    registry.flush()
    assert not any(s.startswith("describe detail") for s in spark.statements)
    registry.queue([record("orders", 16)])
    registry.flush()
    assert any(s.startswith("describe detail") for s in spark.statements)
