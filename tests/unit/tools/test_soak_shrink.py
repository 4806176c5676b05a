"""The soak's shrinking finds the shortest history that still fails, and stops on time."""

from tests.soak.shrink import Batch, ddmin, shrink, statement_count

FOREVER = 10.0**9


def test_ddmin_keeps_exactly_the_items_the_failure_needs() -> None:
    needed = {3, 17, 18}
    calls: list[int] = []

    def fails(kept: list[int]) -> bool:
        calls.append(len(kept))
        return needed <= set(kept)

    assert ddmin(list(range(40)), fails, deadline=FOREVER) == [3, 17, 18]
    assert len(calls) < 120  # far fewer replays than trying every subset


def test_ddmin_returns_what_it_has_when_time_is_up() -> None:
    assert ddmin(list(range(10)), lambda kept: True, deadline=0.0) == list(range(10))


def history(*batches: tuple[str, ...], last: str = "build") -> tuple[Batch, ...]:
    *earlier, final = batches
    return (*(Batch(statements) for statements in earlier), Batch(final, last))


def test_a_failure_of_one_batch_shrinks_to_its_statements_alone() -> None:
    original = history(("a", "b"), ("c", "d"), ("e", "update x", "f"), last="after_commit")

    def fails(candidate: tuple[Batch, ...]) -> bool:
        last = candidate[-1]
        return last.outcome == "after_commit" and "update x" in last.statements

    assert shrink(original, fails, minutes=60) == (Batch(("update x",), "after_commit"),)


def test_a_failure_across_batches_keeps_them_apart_when_it_needs_two_builds() -> None:
    original = history(("a", "insert k"), ("b", "c"), ("d", "delete k", "e"), last="fail")

    def fails(candidate: tuple[Batch, ...]) -> bool:
        """Fails only when the insert and the delete are consumed by different builds."""
        holding = [i for i, batch in enumerate(candidate) if "insert k" in batch.statements]
        deleting = [i for i, batch in enumerate(candidate) if "delete k" in batch.statements]
        return bool(holding and deleting) and holding[0] < deleting[0]

    shrunk = shrink(original, fails, minutes=60)
    assert [batch.statements for batch in shrunk] == [("insert k",), ("delete k",)]
    assert shrunk[-1].outcome == "fail"
    assert statement_count(shrunk) == 2


def test_a_history_that_no_longer_fails_is_returned_whole() -> None:
    original = history(("a",), ("b", "c"))
    assert shrink(original, lambda candidate: False, minutes=60) == original
