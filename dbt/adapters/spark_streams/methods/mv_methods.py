"""The adapter's side of `materialized='materialized_view'` (streams/mv/): the plan, the SQL of
the target's write, and the result line. The stream, the build and the commit are the ones a
stream_incremental model uses (stream_methods.py)."""

import json
from dataclasses import replace
from typing import Any

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.meta import AdapterMeta
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_streams.methods.build_response import StreamBuildResponse
from dbt.adapters.spark_streams.methods.stream_methods import STREAM_MARKER, logger
from dbt.adapters.spark_streams.streams.builds.build import broadcasts, dry_run_message
from dbt.adapters.spark_streams.streams.builds.config import consumer_config
from dbt.adapters.spark_streams.streams.errors import StreamError
from dbt.adapters.spark_streams.streams.kinds.view_path import offer_rebuild
from dbt.adapters.spark_streams.streams.mv.plan import (
    CONFIG_FINGERPRINT,
    FINGERPRINT,
    Configuration,
    MaterializedViewPlan,
    columns_changed,
    fingerprint_of,
    plan_materialized_view,
)
from dbt.adapters.spark_streams.streams.sql.catalog import (
    column_names,
    column_types,
    is_view,
    table_properties,
)
from dbt.adapters.spark_streams.streams.sql.quoting import quote_path
from dbt.adapters.spark_streams.streams.views.cost import TableSizes, recompute_cost
from dbt.adapters.spark_streams.streams.views.definition import builtin_lookup


class MaterializedViewMethods(metaclass=AdapterMeta):
    """Mixed into the adapter (AdapterMeta collects its @available methods)."""

    run_rows: Any
    _node: Any

    @available
    def materialized_view_plan(
        self,
        node_id: str,
        model_name: str,
        config: Any,
        sql: str,
        existing: BaseRelation | None,
        full_refresh: bool,
        replaced_inputs: dict[str, str] | None = None,
    ) -> MaterializedViewPlan:
        """The build's one decision (streams/mv/plan.py); the model's consumer config gains
        the definition's fingerprint as a table property of the target it creates."""
        if STREAM_MARKER in sql:
            raise StreamError(
                f"Model {model_name}: a materialized view reads its sources, not streams; its "
                "refresh follows their changes itself. Remove the stream() call (read the "
                "source or ref), or make the model stream_incremental."
            )
        is_delta = existing is not None and bool(existing.is_delta)  # type: ignore[attr-defined]
        built = self._built_with(existing) if existing is not None and is_delta else {}
        configuration = Configuration(
            now=_configuration(config),
            built=built.get(CONFIG_FINGERPRINT),
            on_change=str(config.get("on_configuration_change") or "apply"),
        )
        plan = plan_materialized_view(
            model_name,
            sql,
            str(config.get("refresh", "auto")),
            built.get(FINGERPRINT),
            full_refresh,
            builtin_lookup(self.run_rows),
            configuration,
        )
        if plan.warning:
            logger.warning(plan.warning)
        plan = self._tables_only(plan)
        if plan.incremental:
            plan = self._followable_inputs(plan, replaced_inputs or {})
        if plan.incremental and not plan.rebuild and existing is not None:
            plan = self._with_columns_of(plan, sql, existing)
        node = self._node(node_id)
        consumer = consumer_config(model_name, config)
        properties = {**consumer.target_properties, **plan.properties}
        node.consumer = replace(
            consumer,
            target_properties=properties,
            recomputes_input=plan.recomputes_input,
            recompute_keys=plan.recompute_keys,
        )
        node.materialized_view = plan
        return plan

    @available
    def materialized_view_estimate(self, node_id: str) -> None:
        """A query with an outer join refreshes by recomputing the groups its tables' changes
        may touch from its tables read whole (streams/mv/joined_sql.py): over the model's
        rebuild_min_bytes the estimate (views/cost.py) offers the build a full refresh, taken
        as a view stream's is, in the same commit with the same offsets."""
        node = self._node(node_id)
        plan: MaterializedViewPlan = node.materialized_view
        build = node.build
        if not plan.joined or plan.rebuild or build is None or not build.has_write:
            return
        tables, changed = [], []
        for table in plan.tables:
            name = quote_path(table["schema"], table["name"])
            tables.append(name)
            offset = build.registered.get(table["stream"])
            if offset is None or build.pins[name].version > offset.offset_version:
                changed.append(name)
        minimum = node.consumer.rebuild_min_bytes
        cost = recompute_cost(TableSizes(self.run_rows), tables, changed, minimum)
        offer_rebuild(build, plan.model, plan.model, cost)

    def _tables_only(self, plan: MaterializedViewPlan) -> MaterializedViewPlan:
        """A joined query reads its tables at versions: one that names a view refreshes fully."""
        for table in plan.tables:
            if is_view(self.run_rows, table["schema"], table["name"]):
                reason = (
                    f"an outer join of view {table['schema']}.{table['name']} (join its tables)"
                )
                return plan.refreshing_fully(reason)
        return plan

    def _followable_inputs(
        self, plan: MaterializedViewPlan, replaced: dict[str, str]
    ) -> MaterializedViewPlan:
        """A model the query reads whose build replaces its table (a new Delta table id, which
        no stream follows) makes the refresh read it whole: a table model, or a materialized
        view refreshing fully (its table carries no definition's fingerprint)."""
        for name, materialized in sorted(replaced.items()):
            if materialized == "table":
                return plan.refreshing_fully(
                    f"it reads {name}, a table model, which dbt replaces at each run (a view, "
                    "ephemeral or stream_incremental model in its place is followed)"
                )
            if self._replaces_table(quote_path(*name.split(".", 1))):
                return plan.refreshing_fully(
                    f"it reads {name}, a materialized view that refreshes fully, replacing its "
                    "table at each run"
                )
        return plan

    @available
    def materialized_view_replaces_table(self, relation: BaseRelation) -> bool:
        """Whether the materialized view at `relation` refreshes fully, replacing its table
        at each run (a new Delta table id, which no stream follows)."""
        return self._replaces_table(quote_path(str(relation.schema), str(relation.identifier)))

    def _replaces_table(self, table: str) -> bool:
        """A built materialized view's table without a definition's fingerprint (it refreshes
        fully); False where it is not built yet (the query's own read then says so)."""
        try:
            return FINGERPRINT not in table_properties(self.run_rows, table)
        except DbtRuntimeError:
            return False

    def _with_columns_of(
        self, plan: MaterializedViewPlan, sql: str, existing: BaseRelation
    ) -> MaterializedViewPlan:
        """The plan rebuilding the table where the query's columns no longer match it: a
        source's widened column changes the aggregates over it, and the refresh's write into
        the table's narrower column would fail."""
        try:
            query = self.run_rows(f"describe query {sql}")
        except Exception:  # a source away: the stream's resolution says so in a sentence
            return plan
        table = self.run_rows(f"describe table {existing}")
        changed = columns_changed(
            list(zip(column_names(query), column_types(query), strict=True)),
            list(zip(column_names(table), column_types(table), strict=True)),
        )
        if not changed:
            return plan
        return replace(plan, rebuild=True, because=f"its query's columns changed: {changed}")

    def _built_with(self, existing: BaseRelation) -> dict[str, str]:
        """The fingerprints of the definition and configuration the target was built with,
        if this materialization built it."""
        found = table_properties(self.run_rows, str(existing))
        return {k: str(found[k]) for k in (FINGERPRINT, CONFIG_FINGERPRINT) if k in found}

    @available
    def materialized_view_sql(
        self, node_id: str, changes: str, target: BaseRelation | None, names: list[str]
    ) -> str:
        """The target's write: on a rebuild its rows (the query over the stream's first rows,
        `changes`); else the MERGE of the changed groups, `names` being the target's columns
        and the groups recomputed from the input's rows at the build's pins."""
        node = self._node(node_id)
        plan: MaterializedViewPlan = node.materialized_view
        if plan.joined:
            return self._joined_sql(node, plan, target, list(names))
        if target is None:
            offer = node.build.rebuild_offer if node.build is not None else None
            if offer is not None and node.build.rebuilt_because:
                changes = offer.rows_sql  # the view stream's estimate chose a full refresh
            return plan.first_sql(changes, list(names))
        rows = node.build.view_rows[plan.model] if node.build is not None else None
        if rows is None:
            raise StreamError(f"Model {plan.model}: its input's stream was not read.")
        if node.build.recompute_ranges:  # only the rows of the change's group keys
            rows = f"select * from ({rows}) where {node.build.recompute_ranges}"
        config = node.build.config
        small = config is not None and broadcasts(config, node.build)  # so are its groups
        return plan.refresh_sql(changes, str(target), list(names), rows, small)

    def _joined_sql(
        self, node: Any, plan: MaterializedViewPlan, target: BaseRelation | None, names: list[str]
    ) -> str:
        """A joined query's write: each table read at its pin, its changes those its stream
        read (streams/mv/joined_sql.py)."""
        build = node.build
        pinned, changes, columns = {}, {}, {}
        for table in plan.tables:
            alias, name = table["alias"], quote_path(table["schema"], table["name"])
            pin = build.pins[name]
            pinned[alias] = f"select * from {name} version as of {pin.version}"
            changes[alias] = build.reads[table["stream"]][1]
            columns[alias] = list(column_names(self.run_rows(f"describe table {name}")))
        if target is None:
            return plan.joined_first_sql(pinned, names)
        return plan.joined_refresh_sql(str(target), names, pinned, changes, columns)

    @available
    def materialized_view_dry_run(self, flag: str, created: bool) -> StreamBuildResponse:
        """dbt's --empty or --sample: the result line a stream model's dry run gives."""
        return StreamBuildResponse(_message=dry_run_message(flag, created))

    @available
    def materialized_view_response(
        self, node_id: str, response: StreamBuildResponse | None
    ) -> StreamBuildResponse:
        """The result line says which path the refresh took: `OK, refreshed incrementally: 3
        groups changed; ...`, or `OK, refreshed fully: <why>`; run_results carries it as
        build_path."""
        plan: MaterializedViewPlan = self._node(node_id).materialized_view
        if not plan.incremental:
            return StreamBuildResponse(
                _message=f"OK, refreshed fully: {plan.reason}", build_path="full"
            )
        assert response is not None
        said = response._message.removeprefix("OK, ")
        if response.build_path == "rebuild" and not plan.rebuild:
            # `rebuilt <target>: <the estimate>; consumed ...`
            message = f"OK, refreshed fully: {said.split(': ', 1)[-1]}"
            return replace(response, _message=message, build_path="full")
        if plan.rebuild:
            because = f" ({plan.because})" if plan.because else ""
            message, path = f"OK, built from its sources' current rows{because}; {said}", "rebuild"
        elif response.rows_affected is None:
            message, path = response._message, "incremental"
        else:
            groups = response.rows_affected
            message, path = (
                f"OK, refreshed incrementally: {groups} group{'' if groups == 1 else 's'} "
                f"changed; {said}",
                "incremental",
            )
        return replace(response, _message=message, build_path=path)


def _configuration(config: Any) -> str:
    """The fingerprint of the config a table is written with: its layout and properties."""
    settings = [
        config.get(name) for name in ("partition_by", "liquid_clustered_by", "tblproperties")
    ]
    return fingerprint_of(json.dumps(settings, sort_keys=True, default=str))
