"""The adapter surface for a stream target's schema: the columns its source widened, widened
in the target before the build's write (streams/delta/type_widening.py)."""

from collections.abc import Callable
from typing import Any

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.meta import AdapterMeta

from dbt.adapters.spark_streams.streams.delta.type_widening import type_changes, widen_target


class TargetSchemaMethods(metaclass=AdapterMeta):
    """Mixed into the adapter (AdapterMeta collects its @available methods)."""

    run_rows: Callable[..., Any]
    _node: Callable[..., Any]

    @available
    def stream_widen_target(
        self,
        node_id: str,
        model_name: str,
        target: BaseRelation,
        change_columns: list[Any],
        target_columns: list[Any],
        columns: list[str],
        on_schema_change: str,
    ) -> list[str]:
        """Before a build's write into `target`: widen each of `columns` whose type the
        change set (`change_columns`, as described) widened against the target's
        (`target_columns`); fail, naming the fix, for a change Delta cannot apply in place.
        What was widened ('v: int -> bigint') also goes to the build's result line; what a
        target without type widening could not take, to the error of a write that fails on
        it."""
        changes = type_changes(
            columns,
            {column.name: column.dtype for column in change_columns},
            {column.name: column.dtype for column in target_columns},
        )
        plan = widen_target(self.run_rows, model_name, str(target), changes, on_schema_change)
        build = self._node(node_id).build
        if build is not None:
            build.target_columns = tuple(column.name for column in target_columns)
            build.change_columns = tuple(column.name for column in change_columns)
            build.widened = tuple(str(change) for change in plan.apply)
            build.unwidened = tuple(plan.blocked)
        return [str(change) for change in plan.apply]
