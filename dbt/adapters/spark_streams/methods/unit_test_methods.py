"""The adapter surface of dbt unit tests of stream models.

In a unit test dbt renders the model with each `source()` and `ref()` standing for a fixture
CTE of the rows the test gives, and runs it in its `unit` materialization: no build, no
offsets. `stream()`, `changes()` and `for_system_time()` over a fixture read the fixture's rows
(streams/records/fixtures.py) and touch nothing else. A fixture may give the change records'
metadata columns (a DELETE, an update's halves): dbt's get_fixture_sql accepts only the
relation's columns, so this adapter's version of it adds them (macros/unit_tests), and the
stream's SQL must know which the fixture has. That is in the unit test's definition, which
dbt renders after the model: it is read from the manifest dbt gave the adapter.
"""

from collections.abc import Callable
from typing import Any

import sqlglot
from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.meta import AdapterMeta
from dbt_extractor import ExtractionError, py_extract_from_source

from dbt.adapters.spark_streams.streams.records.fixtures import (
    CHANGE_COLUMN_TYPES,
    fixture_change_records_sql,
    fixture_system_time_sql,
    given_change_columns,
)
from dbt.adapters.spark_streams.streams.sql.catalog import as_key

# dbt's prefix of an ephemeral node's CTE, which a unit test's fixtures are.
CTE_PREFIX = "__dbt__cte__"


class UnitTestMethods(metaclass=AdapterMeta):
    """Mixed into the adapter beside StreamMethods."""

    get_macro_resolver: Callable[[], Any]

    @available
    def fixture_stream_sql(self, node_id: str, source: BaseRelation, unique_key: Any) -> str:
        """What `stream()` or `changes()` over the fixture `source` returns in the unit test
        `node_id`: its rows as change records (an INSERT each, unless they say otherwise)."""
        definition = self._unit_test(node_id)
        key = as_key(unique_key) or as_key(self._tested_config(definition).get("unique_key"))
        given = _fixture_columns(definition, str(source.identifier))
        return fixture_change_records_sql(str(source), given, key)

    @available
    def fixture_system_time_sql(self, source: BaseRelation) -> str:
        """What `for_system_time()` over a fixture returns: its rows, period unknown."""
        return fixture_system_time_sql(str(source))

    @available
    def fixture_change_columns(self, rows: Any, columns: list[str]) -> dict[str, str]:
        """For get_fixture_sql: the metadata columns (with their types) to add to a fixture
        whose rows give one its relation does not have; none otherwise."""
        if not _rows_change_columns(rows) - given_change_columns(columns):
            return {}
        return {name: kind for name, kind in CHANGE_COLUMN_TYPES.items() if name not in columns}

    def _unit_test(self, node_id: str) -> Any:
        resolver = self.get_macro_resolver()
        return getattr(resolver, "unit_tests", {}).get(node_id)

    def _tested_config(self, definition: Any) -> Any:
        if definition is None or not definition.depends_on.nodes:
            return {}
        tested = self.get_macro_resolver().nodes.get(definition.depends_on.nodes[0])
        return tested.config if tested is not None else {}


def _fixture_columns(definition: Any, identifier: str) -> frozenset[str]:
    """The metadata columns the fixture behind the CTE `identifier` has: all of them if its
    rows give any (get_fixture_sql adds the rest), those a SQL fixture selects."""
    for given in definition.given if definition is not None else ():
        if CTE_PREFIX + _cte_name(given.input, definition) != identifier:
            continue
        if isinstance(given.rows, str):
            return given_change_columns(_selected_names(given.rows))
        return frozenset(CHANGE_COLUMN_TYPES) if _rows_change_columns(given.rows) else frozenset()
    return frozenset()


def _rows_change_columns(rows: Any) -> frozenset[str]:
    """The metadata columns any of a fixture's rows (dicts) names."""
    return given_change_columns({name for row in rows or [] for name in row})


def _cte_name(given_input: str, definition: Any) -> str:
    """The CTE dbt names a fixture for (parser/unit_tests.py): `<source>__<table>` for a
    source, the model's name for a ref, the tested model's for `this`."""
    if given_input.strip() == "this":
        return str(definition.model)
    try:
        parsed = py_extract_from_source(f"{{{{ {given_input} }}}}")
    except ExtractionError:
        return ""
    if parsed["sources"]:
        source_name, table_name = next(iter(parsed["sources"]))
        return f"{source_name}__{table_name}"
    if parsed["refs"]:
        return str(next(iter(parsed["refs"]))["name"])
    return ""


def _selected_names(sql: str) -> list[str]:
    """The output column names of a SQL fixture."""
    try:
        parsed = sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.ParseError:
        return []
    return list(parsed.named_selects) if isinstance(parsed, sqlglot.exp.Query) else []
