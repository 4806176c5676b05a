"""The shortest history that still fails: delta debugging over a soak's batches and statements.

A soak failure after an hour of random changes is hard to read as it stands. Each candidate
history is replayed from an empty warehouse (about a minute per dbt build), so shrinking
tries the cheap, large cuts first (the failing batch alone, everything as one batch), then
removes batches, then statements, and stops at a deadline with the shortest history found.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

Item = TypeVar("Item")


@dataclass(frozen=True)
class Batch:
    """Random statements and what the soak did with them: `build` applies them in a build that
    must pass every check; `fail` in a build made to fail; any other outcome names the step of
    the commit protocol its build is killed at. A checked build follows `fail` and kills."""

    statements: tuple[str, ...]
    outcome: str = "build"


History = tuple[Batch, ...]


def ddmin(
    items: Sequence[Item], keeps_failing: Callable[[list[Item]], bool], deadline: float
) -> list[Item]:
    """Zeller's delta debugging (complements only): remove chunks, halving their size when no
    chunk can go, until no single item can go or time is up."""
    current, chunks = list(items), 2
    while len(current) >= 2 and time.monotonic() < deadline:
        size = -(-len(current) // chunks)
        for start in range(0, len(current), size):
            candidate = current[:start] + current[start + size :]
            if time.monotonic() >= deadline:
                return current
            if keeps_failing(candidate):
                current, chunks = candidate, max(chunks - 1, 2)
                break
        else:
            if chunks >= len(current):
                return current
            chunks = min(len(current), chunks * 2)
    return current


def statement_count(history: History) -> int:
    return sum(len(batch.statements) for batch in history)


def shrink(history: History, fails: Callable[[History], bool], minutes: float) -> History:
    """The shortest history found within `minutes` for which `fails` still holds.

    `fails` replays a candidate and says whether it fails the same way as the original."""
    deadline = time.monotonic() + minutes * 60
    last = history[-1]
    for cut in (
        (last,),
        (replace(last, statements=tuple(s for b in history for s in b.statements)),),
    ):
        if statement_count(cut) < statement_count(history) and fails(cut):
            history = cut
            break
    if len(history) > 1:
        history = tuple(ddmin(history, lambda kept: bool(kept) and fails(tuple(kept)), deadline))
    for index in range(len(history)):
        history = shrink_batch(history, index, fails, deadline)
    return history


def shrink_batch(
    history: History, index: int, fails: Callable[[History], bool], deadline: float
) -> History:
    """`history` with the statements of its batch `index` cut down to those it fails with."""

    def with_statements(statements: Sequence[str]) -> History:
        batch = replace(history[index], statements=tuple(statements))
        return (*history[:index], batch, *history[index + 1 :])

    kept = ddmin(history[index].statements, lambda kept: fails(with_statements(kept)), deadline)
    return with_statements(kept)
