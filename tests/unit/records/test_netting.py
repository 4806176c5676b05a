"""Which read each stream mode gets, and what its row ids hash (no JVM). The reads' results
are checked on Spark by the functional tests; these pin the choices made in Python."""

from dbt.adapters.spark_streams.streams.records.netting import (
    ChangeRange,
    Snapshot,
    append_only_sql,
    empty_sql,
    feed_sql,
    initial_rows_sql,
    net_changes_sql,
    versions_sql,
)

COLUMNS = ("id", "tags")
TYPES = ("int", "map<string,int>")
KEYED = ChangeRange("`raw`.`orders`", COLUMNS, ("id",), 4, 6, TYPES)
KEYLESS = ChangeRange("`raw`.`orders`", COLUMNS, (), 4, 6, TYPES)
KEY_HASH = "sha1(to_json(named_struct('id', `id`), map('ignoreNullFields', 'false')))"


def test_the_feed_is_read_by_path_when_the_location_is_known() -> None:
    assert feed_sql(KEYED) == "table_changes('`raw`.`orders`', 4, 6)"
    by_path = ChangeRange("`raw`.`orders`", COLUMNS, (), 4, 6, location="file:/w/o'rders")
    assert feed_sql(by_path) == "table_changes_by_path('file:/w/o\\'rders', 4, 6)"
    assert feed_sql(ChangeRange("v", COLUMNS, (), 0, 0, feed="select 1")) == "(select 1)"


def test_standard_reads_net_by_key_by_value_or_by_the_views_rows() -> None:
    assert "partition by `id` order by _commit_version" in net_changes_sql(KEYED)
    keyless = net_changes_sql(KEYLESS)
    assert "lateral view explode(sequence(1, abs(_net)))" in keyless
    assert "group by 1" in keyless and "'DELETE' end as metadata_action" in keyless
    view = ChangeRange("v", COLUMNS, ("id",), 0, 6, TYPES, feed="select 1")
    assert "raise_error('unique_key (id) is not unique in v: a key has two rows" in (
        net_changes_sql(view)
    )


def test_row_ids_hash_the_key_or_the_value_and_its_occurrence() -> None:
    assert f"{KEY_HASH} as metadata_row_id" in append_only_sql(KEYED)
    keyless = append_only_sql(KEYLESS)
    assert "'#', _commit_version, '#', row_number() over (partition by to_json(" in keyless
    assert keyless.endswith(
        "from table_changes('`raw`.`orders`', 4, 6) where _change_type = 'insert'"
    )
    # a map column is hashed in its canonical (sorted) form
    assert "'tags', array_sort(transform(map_entries(`tags`)," in keyless


def test_initial_rows_are_inserts_at_the_snapshot() -> None:
    snapshot = Snapshot("`raw`.`orders`", COLUMNS, ("id",), 6, "2026-11-25 09:00:00", TYPES)
    sql = initial_rows_sql(snapshot)
    assert sql.startswith("select `id`, `tags`, 'INSERT' as metadata_action, false as ")
    # bigint, as a change feed's _commit_version is: every build writes one type
    assert f"{KEY_HASH} as metadata_row_id, cast(6 as bigint) as metadata_commit_version, " in sql
    assert sql.endswith(
        "timestamp'2026-11-25 09:00:00' as metadata_commit_timestamp "
        "from `raw`.`orders` version as of 6"
    )
    assert empty_sql(snapshot) == f"select * from ({sql}) where false"
    keyless = initial_rows_sql(Snapshot("`raw`.`orders`", COLUMNS, (), 6, "t", TYPES))
    assert "'#', row_number() over (partition by to_json(" in keyless


def test_history_reads_every_version_but_updates_that_changed_nothing() -> None:
    sql = versions_sql(KEYED)
    assert (
        "case when _change_type in ('delete', 'update_preimage') then 'DELETE' else 'INSERT' end"
    ) in sql
    assert "_change_type = 'update_postimage' as metadata_isupdate" in sql
    assert sql.endswith(
        "where _change_type in ('insert', 'delete')\n"
        "   or (_change_type = 'update_postimage' and _occurrence > _unchanged)\n"
        "   or (_change_type = 'update_preimage' and _kept = 0)"
    )


def test_history_deletes_the_old_key_of_an_update_that_changed_it() -> None:
    sql = versions_sql(KEYED)
    assert (
        "count_if(_change_type = 'update_postimage') over (partition by _commit_version, _key) "
        "as _kept"
    ) in sql
    assert f"{KEY_HASH.removeprefix('sha1(').removesuffix(')')} as _key" in sql
