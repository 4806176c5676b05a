"""The reference apply_cdc's promise, drawn by Hypothesis: applying a set of events in any
partition into batches, in any order, leaves the state applying them all at once does
(SCD type 1, duplicates delivered any number of times, late events, deletes, truncates). With
ignore_null_updates, partial updates compose in sequence order, so there the batches arrive
in sequence order."""

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from tests.unit.cdc.reference import TRUNCATE, Event, apply, rows, versions

values = st.fixed_dictionaries(
    {"name": st.none() | st.sampled_from(["a", "b"]), "n": st.none() | st.integers(0, 3)}
)
keyed = st.tuples(st.integers(0, 4), st.integers(0, 30), st.booleans(), values)
truncates = st.tuples(st.just(TRUNCATE), st.integers(0, 30), st.just(True), st.just({}))
distinct_events = st.lists(
    keyed | truncates,
    max_size=25,
    unique_by=lambda e: (e[0], e[1]),  # a key's sequence is unique (ties broken by the struct)
)


@st.composite
def delivered(draw) -> tuple[list[Event], list[list[Event]]]:
    """Events, then the same events (some twice) cut into batches in a random order."""
    events = draw(distinct_events)
    copies = events + draw(st.lists(st.sampled_from(events), max_size=5)) if events else []
    shuffled = draw(st.permutations(copies))
    cuts = sorted(draw(st.lists(st.integers(0, len(shuffled)), max_size=4)))
    bounds = [0, *cuts, len(shuffled)]
    return events, [shuffled[a:b] for a, b in pairwise(bounds)]


@given(delivered())
def test_batches_in_any_order_equal_all_at_once(drawn) -> None:
    events, batches = drawn
    state: dict = {}
    for batch in batches:
        state = apply(state, batch, ignore_null_updates=False)
    assert rows(state) == rows(apply({}, events, ignore_null_updates=False))


@given(distinct_events, st.lists(st.integers(0, 25), max_size=4))
def test_partial_updates_compose_over_batches_in_sequence_order(events, cuts) -> None:
    ordered = sorted(events, key=lambda e: e[1])
    bounds = [0, *sorted(cuts), len(ordered)]
    state: dict = {}
    for a, b in pairwise(bounds):
        state = apply(state, ordered[a:b], ignore_null_updates=True)
    assert rows(state) == rows(apply({}, events, ignore_null_updates=True))


def test_a_partial_update_keeps_what_it_does_not_name() -> None:
    events = [
        (1, 1, False, {"name": "a", "n": 1}),
        (1, 2, False, {"name": None, "n": 2}),
        (1, 3, True, {"name": None, "n": None}),
        (1, 4, False, {"name": None, "n": 4}),
    ]
    assert rows(apply({}, events[:2], ignore_null_updates=True)) == {1: {"name": "a", "n": 2}}
    # after a delete nothing is kept: the name is gone
    assert rows(apply({}, events, ignore_null_updates=True)) == {1: {"name": None, "n": 4}}
    late = apply(apply({}, events[:2], True), [(1, 0, False, {"name": "z", "n": 0})], True)
    assert rows(late) == {1: {"name": "a", "n": 2}}  # older than the key's state: ignored


def test_versions_close_at_the_next_event() -> None:
    events = [
        (1, 1, False, {"name": "a"}),
        (1, 5, True, {"name": None}),
        (1, 3, False, {"name": "b"}),  # late: lands between
        (1, 7, False, {"name": "c"}),
        (2, 2, False, {"name": "z"}),
    ]
    assert versions(events) == {
        (1, 1, 3, (("name", "a"),)),
        (1, 3, 5, (("name", "b"),)),
        (1, 7, None, (("name", "c"),)),
        (2, 2, None, (("name", "z"),)),
    }


def test_a_truncate_ends_every_key_it_is_newer_than() -> None:
    events = [
        (1, 1, False, {"name": "a"}),
        (2, 6, False, {"name": "b"}),
        (TRUNCATE, 4, True, {}),
        (3, 5, False, {"name": "c"}),
    ]
    assert rows(apply({}, events, ignore_null_updates=False)) == {
        2: {"name": "b"},
        3: {"name": "c"},
    }
    truncated = apply({}, events[:3], ignore_null_updates=False)
    late = [(1, 3, False, {"name": "z"}), (4, 4, False, {"name": "y"})]
    # at or before the truncate: it ended whatever they would set, in any later batch
    assert rows(apply(truncated, late, ignore_null_updates=False)) == {2: {"name": "b"}}
    # after a truncate nothing of the key is kept: a partial update starts from NULLs
    partial = apply(truncated, [(1, 7, False, {"name": None, "n": 1})], ignore_null_updates=True)
    assert rows(partial)[1] == {"name": None, "n": 1}


def test_tracked_columns_open_versions_and_the_rest_update_them() -> None:
    events = [
        (1, 1, False, {"name": "a", "n": 1}),
        (1, 3, False, {"name": "a", "n": 3}),  # only n changed: the version takes it
        (1, 5, False, {"name": "b", "n": 3}),
        (1, 7, True, {"name": None, "n": None}),
        (1, 8, False, {"name": "b", "n": 8}),  # after a delete: a version, whatever it holds
    ]
    assert versions(events, tracked=["name"]) == {
        (1, 1, 5, (("n", 3), ("name", "a"))),
        (1, 5, 7, (("n", 3), ("name", "b"))),
        (1, 8, None, (("n", 8), ("name", "b"))),
    }
    late = [*events, (1, 2, False, {"name": "z", "n": 2})]  # splits the first version
    assert versions(late, tracked=["name"]) == {
        (1, 1, 2, (("n", 1), ("name", "a"))),
        (1, 2, 3, (("n", 2), ("name", "z"))),
        (1, 3, 5, (("n", 3), ("name", "a"))),
        (1, 5, 7, (("n", 3), ("name", "b"))),
        (1, 8, None, (("n", 8), ("name", "b"))),
    }
    # with no column tracked, only a delete ends a version
    assert versions(events[:3], tracked=[]) == {(1, 1, None, (("n", 3), ("name", "b")))}


def test_the_guide_s_tracked_example() -> None:
    """docs/guides/change-feeds.md, "Which columns open a version": customer 7's tier."""
    events = [
        (7, 10, False, {"tier": "gold", "login": 1}),
        (7, 12, False, {"tier": "gold", "login": 2}),
        (7, 20, False, {"tier": "silver", "login": 3}),
    ]
    assert versions(events, tracked=["tier"]) == {
        (7, 10, 20, (("login", 2), ("tier", "gold"))),
        (7, 20, None, (("login", 3), ("tier", "silver"))),
    }
    late = [*events, (7, 15, False, {"tier": "silver", "login": 9})]
    assert versions(late, tracked=["tier"]) == {
        (7, 10, 15, (("login", 2), ("tier", "gold"))),
        (7, 15, None, (("login", 3), ("tier", "silver"))),
    }
    split = [*late, (7, 11, False, {"tier": "bronze", "login": 5})]
    assert (7, 10, 11, (("login", 1), ("tier", "gold"))) in versions(split, tracked=["tier"])
