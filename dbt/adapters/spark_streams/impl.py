"""SparkStreamsAdapter: dbt-spark's adapter under the `spark_streams` type."""

import re
from collections.abc import Callable
from typing import Any

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.impl import AdapterTrackingRelationInfo, ConstraintSupport
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.spark import SparkAdapter, SparkColumn
from dbt_common.contracts.constraints import ConstraintType
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_streams.__version__ import version
from dbt.adapters.spark_streams.connections import SparkStreamsConnectionManager
from dbt.adapters.spark_streams.credentials import StreamsConnectionMethod
from dbt.adapters.spark_streams.methods.cdc_methods import ChangeFeedMethods
from dbt.adapters.spark_streams.methods.mv_methods import MaterializedViewMethods
from dbt.adapters.spark_streams.methods.stream_methods import StreamMethods
from dbt.adapters.spark_streams.methods.stream_operations import StreamOperations
from dbt.adapters.spark_streams.methods.target_schema_methods import TargetSchemaMethods
from dbt.adapters.spark_streams.methods.unit_test_methods import UnitTestMethods
from dbt.adapters.spark_streams.session.errors import DERBY_VIEW_TEXT_CHARS, VIEW_TOO_LONG
from dbt.adapters.spark_streams.streams.sql.quoting import quote

# `SHOW TABLE EXTENDED` prints a view's schema as a tree, which names four types differently
# from `DESCRIBE` and from Spark SQL itself; without this the catalog says `long` for a view's
# column and `bigint` for the same column in a table.
TREE_TYPE_NAMES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}
ORDER_BY = re.compile(r"^\s*order\s+by\s+", re.IGNORECASE)
SORT_KEY = re.compile(r"^(.*?)\s+(asc|desc)\s*$", re.IGNORECASE | re.DOTALL)


class SparkStreamsAdapter(
    StreamMethods,
    MaterializedViewMethods,
    ChangeFeedMethods,
    StreamOperations,
    TargetSchemaMethods,
    UnitTestMethods,
    SparkAdapter,
):
    """Everything dbt-spark does, on a session this adapter builds; streams build on it."""

    ConnectionManager = SparkStreamsConnectionManager

    # Delta enforces NOT NULL and CHECK (macros/spark/contracts.sql creates them before the rows
    # are written); it has no unique, primary or foreign keys.
    CONSTRAINT_SUPPORT = {
        **SparkAdapter.CONSTRAINT_SUPPORT,
        ConstraintType.check: ConstraintSupport.ENFORCED,
        ConstraintType.not_null: ConstraintSupport.ENFORCED,
    }

    @classmethod
    def type(cls) -> str:
        return "spark_streams"

    @classmethod
    def get_adapter_run_info(cls, config: RelationConfig) -> AdapterTrackingRelationInfo:
        """dbt derives the module from the class name ('sparkstreams'); name it correctly."""
        from dbt.adapters.__about__ import version as base_version

        return AdapterTrackingRelationInfo(  # type: ignore[abstract]
            adapter_name=cls.type(),
            base_adapter_version=base_version,
            adapter_version=version,
            model_adapter_details=cls._get_adapter_specific_run_info(config),
        )

    def quote(self, identifier: str) -> str:  # type: ignore[override]
        """dbt-spark's quoting, with backticks inside the name doubled as Spark SQL requires."""
        return quote(str(identifier))

    def parse_columns_from_information(self, relation: BaseRelation) -> list[SparkColumn]:
        """dbt-spark's parsing, with type names as Spark SQL spells them."""
        columns = super().parse_columns_from_information(relation)
        for column in columns:
            column.dtype = TREE_TYPE_NAMES.get(column.dtype, column.dtype)
        return columns

    def _build_spark_relation_list(
        self, row_list: Any, relation_info_func: Callable[[Any], tuple[str, str, str]]
    ) -> list[BaseRelation]:
        """dbt-spark's listing without session temporary views.

        `SHOW TABLE EXTENDED IN s` also lists the session's temporary views (dbt-spark's
        `__dbt_tmp` views among them) with no schema. On a long-lived session they outlive the
        model that made them and break `dbt docs generate`; they are never dbt's relations.
        """
        relations = super()._build_spark_relation_list(row_list, relation_info_func)
        return [relation for relation in relations if relation.schema]

    @available
    def listagg_sort_keys(self, order_by_clause: str | None) -> list[dict[str, Any]]:
        """The keys of `order by a, b desc` as {expression, descending}, for dbt's listagg with
        a limit (macros/spark/listagg.sql), which sorts the values one way: keys sorting both
        ways are an error naming the clause."""
        body = ORDER_BY.sub("", order_by_clause or "")
        keys = []
        for item in (part.strip() for part in body.split(",")):
            if not item:
                continue
            found = SORT_KEY.match(item)
            expression, direction = (found[1], found[2]) if found else (item, "asc")
            keys.append({"expression": expression, "descending": direction.lower() == "desc"})
        if len({key["descending"] for key in keys}) > 1:
            raise DbtRuntimeError(
                f"listagg with a limit sorts all its keys one way on Spark; got: {order_by_clause}"
            )
        return keys

    @available
    def refuse_view_derby_cannot_store(self, sql: str) -> None:
        """A view's SQL longer than a Derby metastore stores fails before Spark is asked: the
        metastore's own failure comes only after Hive has retried it for half a minute. Only
        where the metastore is known to be Derby (the embedded session's, or a Derby network
        server's); elsewhere the metastore's own error is translated (session/errors.py)."""
        creds = self.config.credentials
        url = getattr(creds, "metastore_url", None) or ""
        embedded = creds.method == StreamsConnectionMethod.SESSION
        if (
            embedded
            and (not url or url.startswith("jdbc:derby:"))
            and (len(sql) > DERBY_VIEW_TEXT_CHARS)
        ):
            raise DbtRuntimeError(VIEW_TOO_LONG)
