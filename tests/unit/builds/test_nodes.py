"""Each model's state in one invocation, in one object (no JVM): made on first use, shared by
every call of the model, its `now` taken once, and all of it dropped at the invocation's end."""

import threading

from dbt.adapters.spark_streams.streams.builds.nodes import NodeStates


def test_a_models_calls_share_one_state_and_other_models_have_their_own() -> None:
    states = NodeStates()
    first = states.of(("run-1", "model.a"))
    assert states.of(("run-1", "model.a")) is first
    assert states.of(("run-1", "model.b")) is not first
    assert states.of(("run-2", "model.a")) is not first


def test_now_is_taken_once() -> None:
    state = NodeStates().of(("run", "model.a"))
    assert state.now is state.now


def test_the_end_of_an_invocation_drops_every_state() -> None:
    states = NodeStates()
    states.of(("run", "model.a")).declared_streams.append("s")
    states.clear()
    assert states.of(("run", "model.a")).declared_streams == []


def test_threads_asking_at_once_get_one_state() -> None:
    states, seen = NodeStates(), []
    threads = [
        threading.Thread(target=lambda: seen.append(states.of(("run", "model.a"))))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(state) for state in seen}) == 1


def test_the_leases_still_held_are_handed_over_once() -> None:
    states = NodeStates()
    states.of(("run", "model.a")).lease = "lease-a"
    states.of(("run", "model.b"))  # holds none
    states.of(("run", "model.c")).lease = "lease-c"
    assert sorted(states.take_leases()) == ["lease-a", "lease-c"]  # type: ignore[type-var]
    assert states.of(("run", "model.a")).lease is None
    assert states.take_leases() == []
