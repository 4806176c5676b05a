"""The reference apply_cdc (SCD type 1), in Python: the state a set of events leaves, applied
all at once in sequence order. The Spark runs and the property tests compare against it.

An event is (key, sequence, delete, values); values maps column to value, None being NULL. A
truncate (apply_as_truncates) is an event of the key TRUNCATE: at its sequence every key whose
state is no newer is deleted, and no event at or before it applies afterwards.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Event = tuple[Any, Any, bool, dict[str, Any]]


class _Truncate:
    def __repr__(self) -> str:
        return "TRUNCATE"


TRUNCATE: Any = _Truncate()  # the key of a truncate event; the state's key of the newest one


@dataclass
class State:
    """A key's state: its sequence, whether deleted, and its columns (none when deleted)."""

    sequence: Any
    deleted: bool
    values: dict[str, Any]


def unique(events: Iterable[Event]) -> list[Event]:
    """Events of one key and sequence once: a delete first, then the greatest row (by its
    values as text), as the SQL picks them; in sequence order."""
    chosen: dict[tuple, Event] = {}
    for event in events:
        key, sequence, delete, values = event
        mark = (delete, repr(sorted(values.items())))
        held = chosen.get((key, sequence))
        if held is None or mark > (held[2], repr(sorted(held[3].items()))):
            chosen[(key, sequence)] = event
    return sorted(chosen.values(), key=lambda e: (repr(e[0]), e[1]))


def apply(
    state: dict[Any, State], events: Iterable[Event], ignore_null_updates: bool
) -> dict[Any, State]:
    """`state` after `events`: per key, the events newer than its state in sequence order;
    a delete clears the key, an upsert sets its columns (with ignore_null_updates only its
    non-NULL ones, over what the key held)."""
    after = dict(state)
    for key, sequence, delete, values in sorted(unique(events), key=lambda e: e[1]):
        cut = after.get(TRUNCATE)
        if cut is not None and not sequence > cut.sequence:
            continue  # at or before the newest truncate: it ended whatever this would set
        if key is TRUNCATE:
            after = {k: State(sequence, True, {}) if s.sequence <= sequence else s
                     for k, s in after.items()}  # fmt: skip
            after[TRUNCATE] = State(sequence, True, {})
            continue
        held = after.get(key)
        if held is not None and not sequence > held.sequence:
            continue
        if delete:
            after[key] = State(sequence, True, {})
            continue
        base = held.values if held is not None and not held.deleted else {}
        if ignore_null_updates:
            merged = dict(base)
            merged.update({c: v for c, v in values.items() if v is not None})
            after[key] = State(sequence, False, {c: merged.get(c) for c in values})
        else:
            after[key] = State(sequence, False, dict(values))
    return after


def rows(state: dict[Any, State]) -> dict[Any, dict[str, Any]]:
    """The target's rows: each key not deleted, with its columns."""
    return {key: s.values for key, s in state.items() if not s.deleted and key is not TRUNCATE}


def versions(events: Iterable[Event], tracked: Iterable[str] | None = None) -> set[tuple]:
    """SCD type 2: every version the events make, as (key, start, end, values): each upsert
    lasts until the key's next event (an upsert or a delete), the last one has no end. With
    `tracked` columns, an upsert whose tracked columns equal those of the upsert just before
    it opens no version: the version it falls in takes its values."""
    by_key: dict[Any, list[Event]] = {}
    for event in unique(events):
        by_key.setdefault(event[0], []).append(event)
    found = set()
    watched = None if tracked is None else sorted(tracked)
    for key, chain in by_key.items():
        chain.sort(key=lambda e: e[1])
        opened: list[list] = []  # [start, values] of each version, a delete as values None
        for _, sequence, delete, values in chain:
            last = opened[-1][1] if opened else None
            if (
                watched is not None
                and not delete
                and last is not None
                and all(last.get(c) == values.get(c) for c in watched)
            ):
                opened[-1][1] = values
            else:
                opened.append([sequence, None if delete else values])
        for i, (start, values) in enumerate(opened):
            if values is not None:
                end = opened[i + 1][0] if i + 1 < len(opened) else None
                found.add((key, start, end, tuple(sorted(values.items()))))
    return found
