"""What the adapter keeps for each model between its calls in one dbt invocation, in one place.

A model's macros call the adapter several times (each stream(), changes() and for_system_time()
call, the materialization's plan and commit), and those calls must agree: one pin per source,
one build, one `now`. dbt runs a model's nodes on one thread, and other threads build other
models, so each model has its own state, and all of it is dropped together when dbt closes its
connections at the end of the invocation.
"""

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dbt.adapters.spark_streams.streams.builds.build import StreamBuild
from dbt.adapters.spark_streams.streams.builds.config import ConsumerConfig
from dbt.adapters.spark_streams.streams.delta.source import SourceVersion

NodeKey = tuple[str, str]
"""(invocation id, node id): a state never outlives its invocation, even when dbt runs
several invocations in one process (its tests, a notebook)."""


@dataclass
class NodeState:
    """One model's state in one invocation."""

    pins: dict[str, SourceVersion] = field(default_factory=dict)  # shared by every read
    build: StreamBuild | None = None  # made by its first stream() call, ended by its commit
    consumer: ConsumerConfig | None = None  # a stream_incremental model's config, parsed once
    declared_streams: list[str] = field(default_factory=list)  # names its stream() calls give
    lease: object | None = None  # the consumer's lease on an object store, held while it builds
    materialized_view: Any = None  # a materialized view's plan (streams/mv/plan.py)
    _now: datetime | None = None

    @property
    def now(self) -> datetime:
        """The node's `now`, taken once: retention_start() and for_system_time() in one build
        agree on where the readable history begins."""
        if self._now is None:
            self._now = datetime.now()
        return self._now


class NodeStates:
    """Every model's state in the invocations under way; threads share it."""

    def __init__(self) -> None:
        self._states: dict[NodeKey, NodeState] = {}
        self._lock = threading.Lock()

    def of(self, key: NodeKey) -> NodeState:
        """The node's state, made on first use."""
        with self._lock:
            return self._states.setdefault(key, NodeState())

    def take_leases(self) -> list[object]:
        """The leases builds still hold (a build that failed before its commit), handed over
        to be released."""
        with self._lock:
            held = [state.lease for state in self._states.values() if state.lease is not None]
            for state in self._states.values():
                state.lease = None
            return held

    def clear(self) -> None:
        """Drop every state: the invocation is over."""
        with self._lock:
            self._states.clear()
